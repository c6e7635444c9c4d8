/**
 * POST /mcp: the MCP tools over streamable HTTP, for remote assistants. The token comes as
 * `Authorization: Bearer <token>` and is checked before the protocol sees the request; the Host is
 * checked as on every route (app.ts), and a browser's Origin must be this server's own. Stateless:
 * each request gets its own transport and server over the token's user (nothing is kept between
 * requests but the reasons of failed uploads), answered as JSON.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Elysia } from 'elysia';
import { ApiError, badRequest, forbidden } from '../errors';
import { originOf, tokenOf } from '../http/auth';
import { ErrorBody } from '../http/models';
import type { Service } from '../service';
import { UploadFailures } from './backend';
import { localBackend } from './local';
import { createMcpServer } from './tools';

const JSON_RPC_EXAMPLE = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

export function mcpRoutes(s: Service) {
  const failures = new UploadFailures();
  const notAllowed = ({ set }: { set: { status?: number | string; headers: Record<string, string | number> } }) => {
    set.status = 405;
    set.headers.allow = 'POST';
    return { error: 405, message: 'this MCP endpoint is stateless: send JSON-RPC messages with POST /mcp' };
  };
  return new Elysia({ name: 'routes/mcp' })
    .post(
      '/mcp',
      async ({ request, set }) => {
        const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
        if (type !== 'application/json')
          throw badRequest('POST /mcp takes a JSON-RPC message as the body (Content-Type: application/json)');
        checkOrigin(request, originOf(request));
        set.headers['www-authenticate'] = 'Bearer realm="vidq"';
        const user = await s.accounts.authenticate(tokenOf(undefined, request));
        delete set.headers['www-authenticate'];
        const accept = request.headers.get('accept') ?? '';
        if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
          throw new ApiError(406, 'an MCP client accepts both application/json and text/event-stream (Accept header)');
        const log = s.log.child({ part: 'mcp' });
        const server = createMcpServer(localBackend(s, user, originOf(request), failures), {
          onError: (e) => log.error('tool failed', { reason: (e as Error)?.message ?? String(e) }),
        });
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        await server.connect(transport);
        try {
          return await transport.handleRequest(request);
        } finally {
          await server.close();
        }
      },
      {
        parse: 'none',
        detail: {
          security: [{ bearer: [] }],
          operationId: 'mcp',
          tags: ['mcp'],
          summary: 'Model Context Protocol server (streamable HTTP) for AI assistants',
          description:
            'The MCP tools of vidq (list_indexes, list_videos, add_video, get_video_status, search_moments, ask, get_transcript, describe_video, list_people, remove_video) over the streamable HTTP transport, stateless, answered as JSON. ' +
            'Authenticated by `Authorization: Bearer <token>` (401 before any tool runs); `Accept` must list application/json and text/event-stream. ' +
            'The tools follow the rules of the API: `ask` and `describe_video` cost what POST /inquire costs, searching is free, and each user sees only their own indexes. Use an MCP client (docs/mcp.md); `vidq mcp` is the same tools over stdio.',
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  description: 'a JSON-RPC 2.0 message of the Model Context Protocol (or a batch of them)',
                  required: ['jsonrpc'],
                  properties: {
                    jsonrpc: { type: 'string', enum: ['2.0'] },
                    id: { oneOf: [{ type: 'integer' }, { type: 'string' }] },
                    method: { type: 'string' },
                    params: { type: 'object' },
                  },
                },
                example: JSON_RPC_EXAMPLE,
              },
            },
          },
          responses: {
            200: {
              description: 'the JSON-RPC response (a tool error is a result with `isError: true`)',
              content: { 'application/json': { schema: { type: 'object', description: 'a JSON-RPC 2.0 response' } } },
            },
            202: {
              description: 'a notification was accepted',
              content: { 'application/json': { schema: { type: 'object' } } },
            },
            400: { description: 'not JSON', content: { 'application/json': { schema: ErrorBody } } },
            401: { description: 'missing or invalid token', content: { 'application/json': { schema: ErrorBody } } },
            403: { description: "another site's Origin", content: { 'application/json': { schema: ErrorBody } } },
            406: {
              description: 'the Accept header does not list both JSON and event streams',
              content: { 'application/json': { schema: ErrorBody } },
            },
          } as never,
        },
      },
    )
    .get('/mcp', notAllowed, { detail: { hide: true }, response: { 405: ErrorBody } })
    .delete('/mcp', notAllowed, { detail: { hide: true }, response: { 405: ErrorBody } });
}

/**
 * A browser sends an Origin: it must be this server itself (a page elsewhere must not drive the
 * tools with a token it holds). Clients that are not browsers send none.
 */
function checkOrigin(request: Request, own: string): void {
  const origin = request.headers.get('origin');
  if (origin === null) return;
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {
    throw forbidden('the Origin header is malformed');
  }
  const allowed = new Set([new URL(own).host.toLowerCase(), (request.headers.get('host') ?? '').toLowerCase()]);
  if (!allowed.has(host))
    throw forbidden(`requests to /mcp from ${JSON.stringify(origin.slice(0, 100))} are refused (cross-origin)`);
}
