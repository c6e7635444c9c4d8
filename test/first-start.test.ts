/**
 * What a new user meets when starting the server the first time (issue 23): one line says which
 * speech engine transcribes and, when none does, the command that adds transcripts; the API's own
 * description states the body limit the server really enforces.
 */
import { afterEach, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_WHISPER_MODEL } from '../src/analysis/engines/stt';
import { loadConfig } from '../src/config';
import { type RunningServer, startServer } from '../src/server';

const running: { server: RunningServer; dir: string }[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.server.stop();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

async function start(flags: Record<string, string | boolean>, prepare?: (dataDir: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'vidq-first-start-'));
  prepare?.(dir);
  const config = loadConfig(
    {
      'data-dir': dir,
      port: '0',
      host: '127.0.0.1',
      'log-level': 'error',
      'min-free-bytes': '0',
      'analysis-workers': '0',
      ...flags,
    },
    {},
  );
  const lines: string[] = [];
  const server = await startServer(config, (l) => lines.push(l));
  running.push({ server, dir });
  return { server, lines };
}

const speechLines = (lines: string[]) => lines.filter((l) => l.startsWith('Speech:'));

test('without a Whisper model, start-up says once that speech is not transcribed and how to add it', async () => {
  const { lines } = await start({ 'analysis-workers': '1', analyzers: 'visual,speech' });
  expect(speechLines(lines)).toHaveLength(1);
  expect(speechLines(lines)[0]).toContain('not transcribed');
  expect(speechLines(lines)[0]).toContain('vidq models pull');
});

test('with a Whisper model in the models directory, start-up names it as the engine', async () => {
  const { lines } = await start({ 'analysis-workers': '1', analyzers: 'visual,speech' }, (dir) => {
    // The presence check reads the model's config.json; the model is not loaded at start-up.
    const model = join(dir, 'models', DEFAULT_WHISPER_MODEL);
    mkdirSync(model, { recursive: true });
    writeFileSync(join(model, 'config.json'), '{}');
  });
  expect(speechLines(lines)).toEqual([`Speech: transcribed here with Whisper (${DEFAULT_WHISPER_MODEL}).`]);
});

test('with --stt none the line says so and names the flag to change', async () => {
  const { lines } = await start({ 'analysis-workers': '1', analyzers: 'visual,speech', stt: 'none' });
  expect(speechLines(lines)).toHaveLength(1);
  expect(speechLines(lines)[0]).toContain('--stt none');
  expect(speechLines(lines)[0]).toContain('--stt auto');
});

test('no speech line when speech is not analysed', async () => {
  const { lines } = await start({ 'analysis-workers': '1', analyzers: 'visual' });
  expect(speechLines(lines)).toEqual([]);
});

test("the API description states the server's real body limit, and bodies above it get 413", async () => {
  for (const [flags, stated, limit] of [
    [{}, '128 KiB (131072 bytes)', 131072],
    [{ 'max-body-bytes': '65536' }, '64 KiB (65536 bytes)', 65536],
  ] as const) {
    const { server } = await start(flags);
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { info: { description: string } };
    expect(doc.info.description).toContain(`\`--max-body-bytes\` (${stated} on this server`);
    expect(doc.info.description).not.toContain('1 MiB');
    const post = (bytes: number) =>
      fetch(`${server.url}/inquire`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: 'x', index: 'y', prompt: 'p'.repeat(bytes) }),
      });
    expect((await post(limit + 100)).status).toBe(413);
    expect((await post(limit - 200)).status).not.toBe(413);
  }
});
