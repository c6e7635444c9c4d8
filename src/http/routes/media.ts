/**
 * GET /media/{file_id}: streams a stored file with HTTP Range support (so a <video> can seek).
 * Authorised by a signed, expiring link (`expires` + `sig`, as in `src`), a `token` query
 * parameter, or a Bearer header. Someone else's file is reported as not found.
 */
import { join } from 'node:path';
import { Elysia, t } from 'elysia';
import { badRequest, errorBody, forbidden, notFound } from '../../errors';
import { MAX_CLIP_SEC } from '../../live/clips';
import { playbackCopy } from '../../media/playback';
import type { Service } from '../../service';
import { authentication } from '../auth';
import type { User } from '../../storage/rows';
import { ErrorBody } from '../models';

/** A live stream's resource: its recording is many segments, played a window at a time. */
const LIVE_TYPE = 'video/x-live';
const LIVE_HAS_NO_FILE =
  'a live stream has no single file; play a moment of it with GET /media/{file_id}/live-clip?start=…&end=…';

export function mediaRoutes(s: Service) {
  /** The video a media request may read: by signed link for exactly this path, or by its owner's token. */
  const authorise = (path: string, fileId: string, query: { expires?: string; sig?: string }, user: User | null) => {
    // No user: the request came with a signed link (the linkOrAuth macro), checked here for this path.
    if (user === null) {
      const verdict = s.links.verify(path, query.expires, query.sig);
      if (verdict === 'expired') throw forbidden('this media link has expired; list the index again for a fresh src');
      if (verdict === 'invalid') throw forbidden('this media link is not valid');
    }
    // A deleted index hides its files too (as its listing, questions and segments), signed links included.
    return s.videos.readable(fileId, user?.id ?? null);
  };
  const query = t.Object({
    token: t.Optional(
      t.String({ description: "the owner's token (or an `Authorization: Bearer` header), instead of a signed link" }),
    ),
    expires: t.Optional(t.String({ description: 'signed link: expiry (Unix seconds), as in `src`' })),
    sig: t.Optional(t.String({ description: 'signed link: signature, as in `src`' })),
  });
  const error = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });
  const refused = {
    401: error('neither a signed link nor a token'),
    403: error('the signed link is invalid or has expired'),
    404: error("no such file, not stored yet, in a deleted index, another user's, or a live stream (see live-clip)"),
  };
  // A stored file keeps its real type: video/*, or image/gif and image/apng for animated images.
  const file = {
    'video/*': { schema: { type: 'string', format: 'binary' } },
    'image/*': { schema: { type: 'string', format: 'binary' } },
  };
  /** The responses of a file served with Range support (serveRange). */
  const streamed = (whole: string) => ({
    200: {
      description: whole,
      headers: {
        'Accept-Ranges': { schema: { type: 'string', const: 'bytes' } },
        'Content-Length': { schema: { type: 'integer' } },
      },
      content: file,
    },
    206: {
      description: 'the requested byte range',
      headers: {
        'Content-Range': { description: '`bytes a-b/size`', schema: { type: 'string' } },
        'Content-Length': { schema: { type: 'integer' } },
      },
      content: file,
    },
    ...refused,
    416: {
      ...error('the range cannot be satisfied'),
      headers: { 'Content-Range': { description: '`bytes */size`', schema: { type: 'string' } } },
    },
  });
  const rangeHeader = {
    name: 'Range',
    in: 'header',
    required: false,
    description: 'one byte range: `bytes=a-b`, `bytes=a-` or `bytes=-n`',
    schema: { type: 'string', examples: ['bytes=0-1023'] },
  } as never;

  return new Elysia({ name: 'routes/media' })
    .use(authentication(s.accounts))
    .get(
      '/media/:file_id',
      async ({ params, query, request, user }) => {
        const v = await authorise(`/media/${params.file_id}`, params.file_id, query, user);
        if (!v.storagePath) throw notFound(`the file is not stored yet (status: ${v.status})`);
        if (v.fileType === LIVE_TYPE) throw notFound(LIVE_HAS_NO_FILE);
        return serveRange(request, Bun.file(s.files.abs(v.storagePath)), v.fileType ?? 'application/octet-stream');
      },
      {
        linkOrAuth: true,
        params: t.Object({ file_id: t.String({ description: 'the video (`file_id` of its resource)' }) }),
        query,
        detail: {
          operationId: 'getMedia',
          tags: ['media'],
          summary: 'Stream a stored video (Range requests supported)',
          description:
            "Authorised by the signed link of `src` (`expires`, `sig`), or by the owner's `token` / Bearer header. One byte range per request, so a `<video>` can seek.",
          parameters: [rangeHeader],
          responses: streamed('the whole file, with its stored MIME type (e.g. video/mp4)') as never,
        },
      },
    )
    .get(
      '/media/:file_id/playback',
      async ({ params, query, request, user }) => {
        const v = await authorise(`/media/${params.file_id}/playback`, params.file_id, query, user);
        if (!v.storagePath) throw notFound(`the file is not stored yet (status: ${v.status})`);
        if (v.fileType === LIVE_TYPE) throw notFound(LIVE_HAS_NO_FILE);
        // The browser-playable copy when the video has one (HEVC, ProRes, GIF…), else the original.
        const copy = playbackCopy(s.files.videoDir(v.id));
        if (copy) return serveRange(request, Bun.file(copy), 'video/mp4');
        // Still being made: the original is what a browser cannot play, so say when to come back.
        if ((v.analysis as { playback?: { state?: string } } | null)?.playback?.state === 'making') {
          const message = 'the playable copy of this video is still being made; try again in a few seconds';
          return Response.json(errorBody(503, message), { status: 503, headers: { 'retry-after': '10' } });
        }
        return serveRange(request, Bun.file(s.files.abs(v.storagePath)), v.fileType ?? 'application/octet-stream');
      },
      {
        linkOrAuth: true,
        params: t.Object({ file_id: t.String({ description: 'the video (`file_id` of its resource)' }) }),
        query,
        detail: {
          operationId: 'getMediaPlayback',
          tags: ['media'],
          summary: 'Stream a video in a form every browser plays (Range requests supported)',
          description:
            'The H.264/AAC MP4 copy (at most 1280×720) made after the analysis of a video whose codec or container not every browser plays (HEVC, ProRes, MPEG-2, GIF, …); the original when there is none. While the copy is being made (`metadata.analysis.playback.state` is "making") it answers 503 with `Retry-After`. `playback_src` of a resource is a signed link to this; authorised as GET /media/{file_id}.',
          parameters: [rangeHeader],
          responses: {
            ...(streamed('the whole copy (video/mp4), or the original with its stored MIME type') as object),
            503: error('the playable copy is still being made (see `Retry-After`)'),
          } as never,
        },
      },
    )
    .get(
      '/media/:file_id/live-clip',
      async ({ params, query, request, user }) => {
        const v = await authorise(`/media/${params.file_id}/live-clip`, params.file_id, query, user);
        const { start, end } = clipWindow(query.start, query.end);
        if (v.fileType !== LIVE_TYPE)
          throw notFound('this file is not a live stream; play it with GET /media/{file_id}');
        const clock = await s.live.clockOf(v.id);
        if (!clock) throw notFound('the stream has no frames yet');
        const clip = await s.live.clip(v.id, clock.originMs, start, end);
        if (!clip)
          throw notFound(
            `nothing of the stream is kept between ${start} s and ${end} s (not reached yet, or purged by the retention)`,
          );
        const res = serveRange(request, Bun.file(clip.path), 'video/mp4');
        res.headers.set('x-clip-start', String(clip.start));
        res.headers.set('x-clip-end', String(clip.end));
        res.headers.set('x-clip-source', clip.source);
        return res;
      },
      {
        linkOrAuth: true,
        params: t.Object({ file_id: t.String({ description: 'the live stream (`file_id` of its resource)' }) }),
        query: t.Object({
          ...query.properties,
          start: t.String({ description: 'stream seconds where the clip starts (as `time` of a segment or an alert)' }),
          end: t.Optional(
            t.String({
              description: `stream seconds where it ends; default start + 30, at most start + ${MAX_CLIP_SEC}`,
            }),
          ),
        }),
        detail: {
          operationId: 'getLiveClip',
          tags: ['media', 'live'],
          summary: 'A playable MP4 of a live stream between two stream times (for a cited moment)',
          description: `A pulled stream's recording segments that cover the window, concatenated and remuxed (H.264 is copied; another codec is made H.264); for a pushed stream, which keeps frames and no recording, its frames in the window as an H.264 video (each frame shown until the next). At most ${MAX_CLIP_SEC} s. A recording is cut at \`start\` and \`end\` (copied when a keyframe is at \`start\`, made H.264 again otherwise); \`X-Clip-Start\` and \`X-Clip-End\` say which stream seconds the clip covers (later than \`start\` where the recording starts later, earlier than \`end\` where it ends sooner; frames from the first kept frame, the last shown for a second). Clips are cached for an hour. Authorised as GET /media/{file_id}; 404 for a file that is not a live stream or a window with nothing kept.`,
          parameters: [rangeHeader],
          responses: {
            ...(streamed('the clip (video/mp4)') as object),
            400: error('start or end is not a number of seconds, end is not after start, or the window is too long'),
          } as never,
        },
      },
    )
    .get(
      '/media/:file_id/frames/:frame',
      async ({ params, query, user }) => {
        const v = await authorise(`/media/${params.file_id}/frames/${params.frame}`, params.file_id, query, user);
        // Frame names are generated (000012.jpg); anything else is refused before touching the disk.
        if (!/^\d{6,12}\.jpg$/.test(params.frame)) throw notFound('no such frame');
        const f = Bun.file(join(s.files.videoDir(v.id), 'frames', params.frame));
        if (!(await f.exists())) throw notFound('no such frame');
        return new Response(f, {
          headers: { 'content-type': 'image/jpeg', 'cache-control': 'private, max-age=86400' },
        });
      },
      {
        linkOrAuth: true,
        params: t.Object({
          file_id: t.String({ description: 'the video' }),
          frame: t.String({
            description:
              'a frame file name as in `frame_url`, e.g. 000012.jpg (of a live stream: its milliseconds, 12 digits)',
            examples: ['000012.jpg'],
          }),
        }),
        query,
        detail: {
          operationId: 'getFrame',
          tags: ['media'],
          summary: 'A sampled frame of a video (JPEG), as cited by answers',
          description:
            'The `frame_url` of an evidence item and the `url` of a frame in GET /videos/{file_id}/segments are signed links to this.',
          responses: {
            200: {
              description: 'the frame',
              content: { 'image/jpeg': { schema: { type: 'string', format: 'binary' } } },
            },
            ...refused,
          } as never,
        },
      },
    );
}

/** The stream-time window of a clip request, checked: 0 ≤ start < end ≤ start + MAX_CLIP_SEC. */
function clipWindow(rawStart: string, rawEnd: string | undefined): { start: number; end: number } {
  const seconds = (name: string, raw: string) => {
    const n = raw.trim() === '' ? Number.NaN : Number(raw);
    if (!Number.isFinite(n) || n < 0) throw badRequest(`${name} must be a number of seconds ≥ 0`);
    return n;
  };
  const start = seconds('start', rawStart);
  const end = rawEnd === undefined ? start + 30 : seconds('end', rawEnd);
  if (end <= start) throw badRequest('end must be after start');
  if (end - start > MAX_CLIP_SEC) throw badRequest(`a clip is at most ${MAX_CLIP_SEC} s long`);
  return { start, end };
}

/** Serves one byte range (`bytes=a-b`, `a-`, `-n`) or the whole file; 416 when unsatisfiable. */
export function serveRange(request: Request, file: ReturnType<typeof Bun.file>, type: string): Response {
  const size = file.size;
  const headers: Record<string, string> = {
    'content-type': type,
    'accept-ranges': 'bytes',
    'cache-control': 'private, max-age=3600',
  };
  const range = request.headers.get('range');
  if (!range) return new Response(file, { headers: { ...headers, 'content-length': String(size) } });
  const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
  let start: number;
  let end: number;
  if (!m || (m[1] === '' && m[2] === '')) return unsatisfiable(size, headers);
  if (m[1] === '') {
    const n = Number(m[2]);
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || end < start) return unsatisfiable(size, headers);
  return new Response(file.slice(start, end + 1), {
    status: 206,
    headers: {
      ...headers,
      'content-range': `bytes ${start}-${end}/${size}`,
      'content-length': String(end - start + 1),
    },
  });
}

function unsatisfiable(size: number, headers: Record<string, string>): Response {
  return new Response(
    JSON.stringify({ error: 416, message: `the range is not satisfiable; the file has ${size} bytes` }),
    {
      status: 416,
      headers: { ...headers, 'content-type': 'application/json', 'content-range': `bytes */${size}` },
    },
  );
}
