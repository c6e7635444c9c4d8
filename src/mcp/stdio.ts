/**
 * `vidq mcp`: the MCP tools over stdio for desktop assistants, as a client of a running vidq (its
 * HTTP API, with the user's token). stdout carries the protocol only; messages go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ClientOptions } from '../cli/client';
import { UploadFailures } from './backend';
import { remoteBackend } from './remote';
import { createMcpServer } from './tools';

/** Serves until stdin closes; returns the exit code. A token the server refuses ends it at once. */
export async function runStdioServer(o: ClientOptions): Promise<number> {
  const err = (line: string) => process.stderr.write(`vidq mcp: ${line}\n`);
  // The token first: a refused one would fail every tool (an unreachable server may come up later).
  try {
    const res = await fetch(`${o.server}/indexes`, {
      headers: { authorization: `Bearer ${o.token}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (res.status === 401) {
      const body = (await res.json().catch(() => null)) as { message?: string } | null;
      err(`the service at ${o.server} refused the token: ${body?.message ?? 'HTTP 401'}`);
      return 1;
    }
  } catch (e) {
    err(`cannot reach the service at ${o.server} yet (${(e as Error).message}); the tools will try again`);
  }
  const server = createMcpServer(remoteBackend(o, new UploadFailures()), {
    onError: (e) => err(`tool failed: ${(e as Error)?.message ?? String(e)}`),
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
  return 0;
}
