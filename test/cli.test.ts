/** The command line as scripts use it: `bun src/main.ts ...` (the same code as the executable). */
import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dataDir = mkdtempSync(join(tmpdir(), 'vidq-cli-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function vidq(...args: string[]) {
  const p = Bun.spawnSync([process.execPath, join(import.meta.dir, '../src/main.ts'), ...args, '--data-dir', dataDir], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** A command's --json output; a command that printed none fails with its exit code and stderr. */
function json(r: ReturnType<typeof vidq>) {
  if (!r.out.trim())
    throw new Error(`no output (exit ${r.code}, signal or crash if null); stderr: ${r.err || '(empty)'}`);
  return JSON.parse(r.out);
}

test('user create --json prints user_id and token; tokens can be added, revoked; credits added', () => {
  const u = vidq('user', 'create', '--name', 'alice', '--credits', '5', '--json');
  expect(u.code).toBe(0);
  const created = JSON.parse(u.out);
  expect(created.user_id).toMatch(/^u_/);
  expect(created.token).toMatch(/^[A-Za-z0-9_-]{60}$/);
  expect(created.credits).toBe(5);

  const t = vidq('token', 'create', '--user', created.user_id, '--json');
  expect(t.code).toBe(0);
  const second = JSON.parse(t.out).token;
  expect(second).not.toBe(created.token);

  expect(json(vidq('credits', 'add', '--user', created.user_id, '--amount', '10', '--json'))).toEqual({
    user_id: created.user_id,
    credits: 15,
  });
  expect(vidq('credits', 'add', '--user', created.user_id, '--amount=-100').code).toBe(1);

  expect(json(vidq('token', 'revoke', '--token', second, '--json'))).toEqual({ revoked: true });
  expect(vidq('token', 'revoke', '--token', second).code).toBe(1);
});

test('a value that starts with "-" is the value of its option (a token issued before tokens were kept from starting with one)', () => {
  const r = vidq('token', 'revoke', '--token', `-${'x'.repeat(59)}`);
  // Looked up, and not found: not a usage error about an ambiguous option.
  expect(r.err).not.toContain('ambiguous');
  expect(r.code).toBe(1);
});

test('--help lists every command and option; bad usage exits 2 with the usage line', () => {
  const h = vidq('--help');
  expect(h.code).toBe(0);
  for (const s of [
    'serve',
    'user create',
    'token create',
    'token revoke',
    'credits add',
    '--allow-private-urls',
    '--data-dir',
    '--port',
    '--host',
  ])
    expect(h.out).toContain(s);
  const sub = vidq('user', 'create', '--help');
  expect(sub.out).toContain('--name');
  const bad = vidq('user', 'create');
  expect(bad.code).toBe(2);
  expect(bad.err).toContain('--name is required');
  expect(vidq('frobnicate').code).toBe(2);
  expect(vidq('serve', '--port', 'abc').code).toBe(2);
});
