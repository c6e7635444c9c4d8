import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatTime, parseTarget } from '../src/answering/target';
import { newIndexId, newToken, newVideoId } from '../src/ids';
import { ConfigError, DEFAULTS, loadConfig } from '../src/config';
import { cleanFileName, fileNameOf } from '../src/ingest/download';
import { isPublicAddress, parseSourceUrl } from '../src/ingest/url-guard';
import { describe as describeProbe } from '../src/media/probe';

const made: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'cfg-'));
  made.push(d);
  return d;
};
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('config', () => {
  test('defaults bind loopback and keep data under the home directory', () => {
    const dir = tempDir();
    const c = loadConfig({ 'data-dir': dir }, {});
    expect(c.host).toBe('127.0.0.1');
    expect(c.allowPrivateUrls).toBe(false);
    expect(c.maxRedirects).toBe(5);
    expect(DEFAULTS.dataDir).toContain('.vidq');
  });

  test('flags override environment, which overrides the config file', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ port: 1111, inquireCost: 3, maxRedirects: 2 }));
    const c = loadConfig({ 'data-dir': dir, port: '3333' }, { VIDQ_PORT: '2222', VIDQ_INQUIRE_COST: '4' });
    expect(c.port).toBe(3333); // flag
    expect(c.inquireCost).toBe(4); // env over file
    expect(c.maxRedirects).toBe(2); // file over default
    expect(loadConfig({ 'data-dir': dir, 'no-anonymous-listing': true }, {}).anonymousListingOnLoopback).toBe(false);
  });

  test('bad values are refused with the option named', () => {
    expect(() => loadConfig({ port: 'abc' }, {})).toThrow(/--port/);
    expect(() => loadConfig({ port: '70000' }, {})).toThrow(ConfigError);
    expect(() => loadConfig({}, { VIDQ_ALLOW_PRIVATE_URLS: 'maybe' })).toThrow(/VIDQ_ALLOW_PRIVATE_URLS/);
    const dir = tempDir();
    writeFileSync(join(dir, 'config.json'), '{"nope": 1}');
    expect(() => loadConfig({ 'data-dir': dir }, {})).toThrow(/unknown option "nope"/);
  });
});

describe('url guard', () => {
  test('public unicast addresses pass, everything else is refused', () => {
    for (const ok of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(isPublicAddress(ok)).toBe(true);
    for (const bad of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '224.0.0.1',
      '255.255.255.255',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(bad)).toBe(false);
    }
  });

  test('decimal, octal and hex forms of loopback normalise to 127.0.0.1', () => {
    for (const form of ['http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f.0.0.1/', 'http://127.1/']) {
      expect(parseSourceUrl(form).hostname).toBe('127.0.0.1');
    }
  });

  test('only http(s) URLs without credentials are accepted', () => {
    expect(() => parseSourceUrl('file:///etc/passwd')).toThrow(/scheme "file"/);
    expect(() => parseSourceUrl('ftp://example.com/a.mp4')).toThrow(/scheme "ftp"/);
    expect(() => parseSourceUrl('data:video/mp4;base64,AAAA')).toThrow(/scheme "data"/);
    expect(() => parseSourceUrl('http://user:pw@example.com/a.mp4')).toThrow(/credentials/);
    expect(() => parseSourceUrl('not a url')).toThrow(/not a valid absolute URL/);
    expect(parseSourceUrl('https://example.com/a b.mp4').pathname).toBe('/a%20b.mp4');
  });
});

describe('file names from outside', () => {
  test('never carry folders or control characters', () => {
    expect(cleanFileName('../../etc/passwd')).toBe('passwd');
    expect(cleanFileName('..\\..\\win.ini')).toBe('win.ini');
    expect(cleanFileName('a\u0000b\nc.mp4')).toBe('abc.mp4');
    expect(fileNameOf('attachment; filename="../x/clip.mp4"', new URL('http://h/v'))).toBe('clip.mp4');
    expect(fileNameOf("attachment; filename*=UTF-8''caf%C3%A9.mp4", new URL('http://h/v'))).toBe('café.mp4');
    expect(fileNameOf(null, new URL('http://h/dir/my%20clip.webm?x=1'))).toBe('my clip.webm');
    expect(fileNameOf(null, new URL('http://h/'))).toBe('video');
  });
});

describe('target', () => {
  test('accepts seconds, mm:ss, hh:mm:ss(.mmm) and ranges', () => {
    expect(parseTarget('75')).toEqual({ start: 75, end: 75, point: true });
    expect(parseTarget('75.5').start).toBe(75.5);
    expect(parseTarget('1:15').start).toBe(75);
    expect(parseTarget('00:01:15.500').start).toBe(75.5);
    expect(parseTarget('1:00-1:30')).toEqual({ start: 60, end: 90, point: false });
    expect(parseTarget('10-20')).toEqual({ start: 10, end: 20, point: false });
  });

  test('refuses other shapes, naming the accepted formats', () => {
    for (const bad of ['', 'abc', '1:75', '-5', '20-10', '1:2:3:4', '12s'])
      expect(() => parseTarget(bad)).toThrow(/target/);
    expect(() => parseTarget('abc')).toThrow(/mm:ss/);
  });

  test('formats times for answers', () => {
    expect(formatTime(75.5)).toBe('1:15');
    expect(formatTime(3725)).toBe('1:02:05');
    expect(formatTime(0)).toBe('0:00');
  });
});

describe('probe description', () => {
  const video = { codec_type: 'video', codec_name: 'h264', width: 640, height: 360, avg_frame_rate: '30000/1001' };
  test('reads duration, fps and container', () => {
    const d = describeProbe(
      {
        streams: [video, { codec_type: 'audio' }],
        format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '12.5' },
      },
      100,
    );
    expect(d).toMatchObject({ durationSec: 12.5, width: 640, hasAudio: true, mimeType: 'video/mp4', ext: 'mp4' });
    expect(d.fps).toBeCloseTo(29.97, 2);
  });
  test('tells webm from matroska by codec', () => {
    expect(
      describeProbe(
        { streams: [{ ...video, codec_name: 'vp8' }], format: { format_name: 'matroska,webm', duration: '3' } },
        100,
      ).ext,
    ).toBe('webm');
    expect(describeProbe({ streams: [video], format: { format_name: 'matroska,webm', duration: '3' } }, 100).ext).toBe(
      'mkv',
    );
  });
  test('refuses audio-only files, still images, cover art only, and durations over the limit', () => {
    expect(() =>
      describeProbe({ streams: [{ codec_type: 'audio' }], format: { format_name: 'wav', duration: '11' } }, 100),
    ).toThrow(/no video stream \(audio only\)/);
    expect(() =>
      describeProbe({ streams: [{ ...video, codec_name: 'png' }], format: { format_name: 'png_pipe' } }, 100),
    ).toThrow(/still image/);
    expect(() =>
      describeProbe(
        {
          streams: [{ codec_type: 'audio' }, { ...video, disposition: { attached_pic: 1 } }],
          format: { format_name: 'mp3', duration: '5' },
        },
        100,
      ),
    ).toThrow(/no video stream/);
    expect(() =>
      describeProbe({ streams: [video], format: { format_name: 'mov,mp4', duration: '999999' } }, 86400),
    ).toThrow(/limit is 86400 s/);
  });
});

describe('ids and tokens', () => {
  test('never start with "-" (a command line would read one as an option), and stay URL-safe at their lengths', () => {
    // Without the rule, about one in 64 starts with "-": 20,000 ids hold ~300 of them.
    for (const [make, length] of [
      [newToken, 60],
      [newVideoId, 32],
      [newIndexId, 64],
    ] as const) {
      const ids = Array.from({ length: 20_000 }, make);
      expect(ids.filter((id) => id.startsWith('-'))).toEqual([]);
      expect(ids.every((id) => id.length === length && /^[A-Za-z0-9_-]+$/.test(id))).toBe(true);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });
});
