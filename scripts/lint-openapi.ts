/**
 * `redocly lint` over the API description as the server serves it (`/openapi.json`), so that what
 * clients and generators read stays valid OpenAPI 3.1. Part of `npm run lint` (and so of CI).
 * Starts a throw-away server on 127.0.0.1 with a temporary data directory; exits with redocly's code.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../src/config';
import { startServer } from '../src/server';

const dir = mkdtempSync(join(tmpdir(), 'vidq-redocly-'));
const config = loadConfig(
  {
    'data-dir': join(dir, 'data'),
    port: '0',
    host: '127.0.0.1',
    'log-level': 'error',
    'min-free-bytes': '0',
    'analysis-workers': '0',
  },
  {},
);
const server = await startServer(config, () => {});
let code = 1;
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, await (await fetch(`${server.url}/openapi.json`)).text());
  // The recommended rules, less two that ask for what a self-hosted API has no use for: a
  // `servers` list (the base URL is the operator's) and a license (the description is not a product).
  writeFileSync(
    join(dir, 'redocly.yaml'),
    'extends:\n  - recommended\nrules:\n  no-server-example.com: off\n  info-license: off\n  no-empty-servers: off\n',
  );
  const redocly = resolve(import.meta.dir, '../node_modules/.bin/redocly');
  const run = Bun.spawnSync([redocly, 'lint', '--config', join(dir, 'redocly.yaml'), '--format', 'stylish', file], {
    stdout: 'inherit',
    stderr: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  code = run.exitCode ?? 1;
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
