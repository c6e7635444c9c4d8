/**
 * Secrets in a pulled stream's URL path (issue 37): an RTMP stream key and a camera password
 * written into an RTSP path are never shown back or logged. Checked on every surface that names a
 * stream: GET /streams (name, source, reason), /index-resources, MCP list_videos, and the server's
 * log lines (the add, and the reconnects after ffmpeg fails to reach the source).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, liveClient } from '../factories';
import { startTestServer, type TestServer } from '../helpers';

const KEY = 'sk_LIVE_SECRETSTREAMKEY123';
const CAMPASS = 'CAMPASS';
const TOKENPATH = 'tok-9f8e7d6c5b4a';
let srv: TestServer;
const logs: string[] = [];
const answers: string[] = [];

beforeAll(async () => {
  srv = await startTestServer(
    { analyzers: 'subtitles', 'log-level': 'info', 'live-stall-sec': '3' },
    { logSink: (l) => logs.push(l) },
  );
});

afterAll(async () => {
  await srv?.stop();
});

const live = liveClient(() => srv, answers);

describe('secrets in a stream URL', () => {
  test('an RTMP stream key and an RTSP path password are never shown back or logged', async () => {
    const tok = srv.token;
    await live.performanceIndex('cams');
    // Nothing listens on these ports: ffmpeg fails and the streams reconnect (their reasons are shown).
    const [rtmpPort, rtspPort, httpPort] = [await freePort(), await freePort(), await freePort()];
    const rtmp = await live.post('/add-stream', {
      token: tok,
      index: 'cams',
      url: `rtmp://127.0.0.1:${rtmpPort}/live/${KEY}`,
    });
    const rtsp = await live.post('/add-stream', {
      token: tok,
      index: 'cams',
      url: `rtsp://localhost:${rtspPort}/user=admin_password=${CAMPASS}_channel=1`,
      name: 'back door',
    });
    const hls = await live.post('/add-stream', {
      token: tok,
      index: 'cams',
      url: `http://127.0.0.1:${httpPort}/hls/${TOKENPATH}/live.m3u8`,
    });
    for (const r of [rtmp, rtsp, hls]) expect(r.status).toBe('success');
    // Each has failed to connect at least once (its reason is the error ffmpeg gave).
    for (const r of [rtmp, rtsp, hls])
      await live.waitStream(r.stream_id, (s) => s.status === 'reconnecting', 30_000, 'a failed connection', 200);

    const streams: any[] = await live.api(`/streams?token=${tok}`);
    const byId = new Map(streams.map((s) => [s.stream_id, s]));
    // Display names: the scheme and host (with port), or the name the user gave; sources the same, path left out.
    expect(byId.get(rtmp.stream_id).name).toBe(`rtmp://127.0.0.1:${rtmpPort}`);
    expect(byId.get(rtmp.stream_id).source).toBe(`rtmp://127.0.0.1:${rtmpPort}/…`);
    expect(byId.get(rtsp.stream_id).name).toBe('back door');
    expect(byId.get(rtsp.stream_id).source).toBe(`rtsp://localhost:${rtspPort}/…`);
    expect(byId.get(hls.stream_id).name).toBe(`http://127.0.0.1:${httpPort}`);

    await live.api(`/index-resources?token=${tok}&index=cams`);
    const mcp = new Client({ name: 'names-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${tok}` } },
      }),
    );
    try {
      const listed = await mcp.callTool({ name: 'list_videos', arguments: { index: 'cams' } });
      const text = JSON.stringify(listed);
      expect(text).toContain(`rtmp://127.0.0.1:${rtmpPort}`);
      answers.push(text);
    } finally {
      await mcp.close();
    }

    const logText = logs.join('\n');
    expect(logText).toContain('live stream added');
    expect(logText).toContain('live source lost; reconnecting');
    for (const secret of [KEY, CAMPASS, TOKENPATH]) {
      expect(logText).not.toContain(secret);
      for (const a of answers) expect(a).not.toContain(secret);
    }
    for (const r of [rtmp, rtsp, hls]) await live.post(`/streams/${r.stream_id}/stop?token=${tok}`, {});
  }, 60_000);
});
