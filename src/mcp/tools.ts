/**
 * The MCP tools, defined once for both transports (the server's /mcp and `vidq mcp` over stdio):
 * names, descriptions written for a model, zod input and output schemas (the SDK lists them as
 * JSON Schema and checks every structured result against its output schema), and handlers written
 * against a Backend (backend.ts). Errors are thrown with the HTTP API's message; the SDK turns them
 * into tool errors (`isError: true`).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ImageContent } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { VERSION } from '../version';
import { ApiError, badRequest, notFound } from '../errors';
import type { Evidence } from '../answering/evidence';
import { SEGMENT_KINDS } from '../storage/rows';
import type { Backend, ResourceRow } from './backend';

/** Cited frames sent as images per call, at most (each costs a model many tokens). */
export const MAX_FRAMES = 6;
/** A frame larger than this is not sent as an image (its frame_url stays in the result). */
export const MAX_FRAME_BYTES = 300_000;
/** Items per page of the list tools, at most; and by default. */
const MAX_PAGE = 200;
const DEFAULT_PAGE = 50;
/** Transcript cues per page, at most; and by default. */
const MAX_CUES = 1000;
const DEFAULT_CUES = 200;
/** What describe_video asks /inquire: a describe question reads as "summary" (answering/intent.ts). */
const DESCRIBE_PROMPT = 'Describe what happens in this video, in order, with the time of each part.';

// ---------------------------------------------------------------- schemas

const indexRef = z.string().min(1).max(200).describe('the index: its index_id (from list_indexes) or its name');
const fileId = z.string().min(1).max(64).describe('file_id of the video (from list_videos or add_video)');
const offset = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe('items to skip: next_offset of the previous page (default 0)');
const limit = (max: number, def: number) =>
  z.number().int().min(1).max(max).optional().describe(`items per page, 1 to ${max} (default ${def})`);
const frames = (def: number) =>
  z
    .number()
    .int()
    .min(0)
    .max(MAX_FRAMES)
    .optional()
    .describe(`how many cited frames to return as JPEG images, 0 to ${MAX_FRAMES} (default ${def})`);

const paging = {
  total: z.number().int().describe('items in all pages'),
  offset: z.number().int(),
  limit: z.number().int(),
  next_offset: z.number().int().nullable().describe('offset of the next page; null on the last one'),
};

const Moment = z.object({
  file_id: z.string().describe('the video'),
  file_name: z.string(),
  start: z.number().describe('seconds from the start of the video'),
  end: z.number().describe('seconds from the start of the video'),
  kind: z.string().describe(`what found it: ${SEGMENT_KINDS.join(', ')}`),
  text: z.string().describe('what was found: words said, text on screen, an object, a shot description'),
  score: z.number().describe('relevance, higher is better'),
  frame_url: z.string().nullable().describe('signed link to the JPEG frame nearest the moment'),
});

const VideoStatus = z.object({
  file_id: z.string(),
  file_name: z.string(),
  status: z.string().describe('queued | downloading | processing | ready | failed'),
  stage: z.string().nullable().describe('the current stage (downloading, probing, queued, shots, speech, …)'),
  progress: z.number().describe('0-100 within the current stage'),
  duration_sec: z.number().nullable(),
  upload_time: z.string().nullable(),
  queue_position: z.number().int().nullable().describe('while waiting for analysis: place in line, 1 = next'),
  eta_sec: z.number().int().nullable().describe('while waiting: estimated seconds until the analysis is done'),
  error: z.string().nullable().describe('why it failed'),
});

// ---------------------------------------------------------------- helpers

function pageOf<T>(items: T[], off = 0, lim = DEFAULT_PAGE) {
  const next = off + lim;
  return {
    items: items.slice(off, next),
    total: items.length,
    offset: off,
    limit: lim,
    next_offset: next < items.length ? next : null,
  };
}

function statusOf(r: ResourceRow): z.infer<typeof VideoStatus> {
  return {
    file_id: r.file_id,
    file_name: r.file_name,
    status: r.status,
    stage: r.stage ?? null,
    progress: r.progress,
    duration_sec: r.metadata.duration ?? null,
    upload_time: r.upload_time ?? null,
    queue_position: r.queue_position ?? null,
    eta_sec: r.eta_sec ?? null,
    error: r.error ?? null,
  };
}

const momentOf = (e: Evidence): z.infer<typeof Moment> => ({
  file_id: e.video_id,
  file_name: e.file_name,
  start: e.start,
  end: e.end,
  kind: e.kind,
  text: e.text,
  score: e.score,
  frame_url: e.frame_url,
});

/** The frames of the first moments that have one (distinct), as JPEG image content. */
async function imagesOf(backend: Backend, moments: { frame_url: string | null }[], max: number) {
  const out: ImageContent[] = [];
  const seen = new Set<string>();
  for (const m of moments) {
    if (out.length >= max) break;
    if (!m.frame_url) continue;
    const path = m.frame_url.replace(/^[a-z]+:\/\/[^/]+/i, '').split('?')[0]!;
    if (seen.has(path)) continue;
    seen.add(path);
    const bytes = await backend.frame(m.frame_url);
    if (!bytes || bytes.length > MAX_FRAME_BYTES) continue;
    out.push({ type: 'image', data: Buffer.from(bytes).toString('base64'), mimeType: 'image/jpeg' });
  }
  return out;
}

function result(structured: Record<string, unknown>, images: ImageContent[] = []): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured) }, ...images] };
}

/** The answer's JSON object when `json` asked for one; null when the answer is not one. */
function fieldsOf(output: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(output);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/**
 * Errors a tool answers with: the API's message for refusals; anything unexpected is logged by the
 * caller's `onError` and answered as the HTTP API answers a 500.
 */
function wrap<A>(
  onError: (e: unknown) => void,
  fn: (args: A, extra: { signal: AbortSignal }) => Promise<CallToolResult>,
) {
  return async (args: A, extra: { signal: AbortSignal }): Promise<CallToolResult> => {
    try {
      return await fn(args, extra);
    } catch (e) {
      if (e instanceof ApiError) throw e;
      onError(e);
      throw new ApiError(500, 'internal error; the server log has details');
    }
  };
}

// ---------------------------------------------------------------- the server

export interface McpOptions {
  /** Unexpected errors (not a refusal): logged where the transport logs. */
  onError?: (e: unknown) => void;
}

/** An MCP server with every tool, over `backend`. */
export function createMcpServer(backend: Backend, opts: McpOptions = {}): McpServer {
  const server = new McpServer(
    { name: 'vidq', title: 'vidq video understanding', version: VERSION },
    {
      instructions:
        'vidq indexes videos (speech, on-screen text, objects, faces, shots) into named indexes and answers questions with timestamps. ' +
        'Start with list_indexes and list_videos. search_moments is free and returns the moments that match; ask and describe_video compose an answer and cost credits. ' +
        'Times are seconds from the start of a video. add_video returns at once: poll get_video_status until status is ready.',
    },
  );
  const onError = opts.onError ?? (() => {});
  const tool = server.registerTool.bind(server);

  tool(
    'list_indexes',
    {
      title: 'List indexes',
      description:
        "Lists the user's video indexes (named collections of videos), newest first, with the number of videos and their total duration.",
      inputSchema: { offset, limit: limit(MAX_PAGE, DEFAULT_PAGE) },
      outputSchema: {
        indexes: z.array(
          z.object({
            index_id: z.string(),
            name: z.string(),
            video_count: z.number().int(),
            total_duration_sec: z.number(),
            created: z.string(),
          }),
        ),
        ...paging,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    wrap(onError, async ({ offset: off, limit: lim }) => {
      const p = pageOf(await backend.listIndexes(), off, lim);
      return result({
        indexes: p.items.map((i) => ({
          index_id: i.index_id,
          name: i.name,
          video_count: i.count,
          total_duration_sec: i.total_duration,
          created: i.created,
        })),
        total: p.total,
        offset: p.offset,
        limit: p.limit,
        next_offset: p.next_offset,
      });
    }),
  );

  tool(
    'list_videos',
    {
      title: 'List the videos of an index',
      description:
        'Lists the videos of an index in upload order, each with its file_id, status (queued, downloading, processing, ready, failed), stage and progress. Only ready videos can be searched and asked about in full.',
      inputSchema: {
        index: indexRef,
        status: z
          .enum(['queued', 'downloading', 'processing', 'ready', 'failed'])
          .optional()
          .describe('only videos with this status'),
        offset,
        limit: limit(MAX_PAGE, DEFAULT_PAGE),
      },
      outputSchema: { index_id: z.string(), index_name: z.string(), videos: z.array(VideoStatus), ...paging },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    wrap(onError, async ({ index, status, offset: off, limit: lim }) => {
      const idx = await backend.resolveIndex(index);
      const rows = (await backend.resources(idx.index_id)).filter((r) => !status || r.status === status);
      const p = pageOf(rows, off, lim);
      return result({
        index_id: idx.index_id,
        index_name: idx.name,
        videos: p.items.map(statusOf),
        total: p.total,
        offset: p.offset,
        limit: p.limit,
        next_offset: p.next_offset,
      });
    }),
  );

  tool(
    'add_video',
    {
      title: 'Add a video to an index',
      description:
        'Adds a video to an index (a new index name creates the index) and returns at once with its file_id; the video is then fetched and analysed. ' +
        (backend.localFiles
          ? 'Give either `url` (http or https address of a video file, fetched by the vidq server) or `path` (a video file on this machine, uploaded). '
          : 'Give `url`: the http or https address of a video file, fetched by the vidq server. ') +
        'Poll get_video_status until its status is ready (or failed) before asking about it.',
      inputSchema: {
        index: z.string().min(1).max(200).describe('index_id of an index, or a name (a new name creates the index)'),
        url: z.string().max(4096).optional().describe('http(s) URL of the video file'),
        ...(backend.localFiles && {
          path: z.string().max(4096).optional().describe('path of a video file on this machine'),
        }),
        subtitles_url: z
          .string()
          .max(4096)
          .optional()
          .describe("http(s) URL of a .vtt or .srt file with the video's subtitles (with `url` only)"),
      },
      outputSchema: {
        file_id: z.string(),
        index_id: z.string(),
        file_name: z.string(),
        next: z.string().describe('what to do next'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    wrap(onError, async (args: { index: string; url?: string; path?: string; subtitles_url?: string }) => {
      const { index, url, subtitles_url } = args;
      const path = backend.localFiles ? args.path : undefined;
      if ((url === undefined) === (path === undefined))
        throw badRequest(
          backend.localFiles
            ? 'give either url (an http(s) address) or path (a file on this machine), not both'
            : 'url is required: the http(s) address of a video file',
        );
      if (path !== undefined && subtitles_url !== undefined)
        throw badRequest('subtitles_url goes with url only; add a local file without it');
      const added =
        url !== undefined ? await backend.addUrl(index, url, subtitles_url) : await backend.addFile(index, path!);
      return result({
        ...added,
        next: `call get_video_status with index "${added.index_id}" and file_id "${added.file_id}" until status is ready`,
      });
    }),
  );

  tool(
    'get_video_status',
    {
      title: "A video's status",
      description:
        'Tells where a video is: status (queued, downloading, processing, ready, failed), the stage it is in, progress 0-100, the place in line and an estimated time until its analysis is done, or why it failed.',
      inputSchema: { index: indexRef, file_id: fileId },
      outputSchema: { index_id: z.string(), ...VideoStatus.shape },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    wrap(onError, async ({ index, file_id }) => {
      const idx = await backend.resolveIndex(index);
      const row = (await backend.resources(idx.index_id)).find((r) => r.file_id === file_id);
      if (row) return result({ index_id: idx.index_id, ...statusOf(row) });
      const failure = backend.uploadFailure(file_id);
      if (failure === undefined) throw notFound(`video ${JSON.stringify(file_id.slice(0, 80))} is not in this index`);
      return result({
        index_id: idx.index_id,
        file_id,
        file_name: '',
        status: 'failed',
        stage: 'failed',
        progress: 0,
        duration_sec: null,
        upload_time: null,
        queue_position: null,
        eta_sec: null,
        error: failure,
      });
    }),
  );

  tool(
    'search_moments',
    {
      title: 'Search moments',
      description:
        'Finds the moments of an index (or of one video) that match words or an idea, best first: what was said, written on screen, seen (objects, shots, captions). ' +
        'Each moment has file_id, file_name, start and end in seconds, kind, the matched text, score and a frame link; the first frames come back as images. Free of charge; paged.',
      inputSchema: {
        index: indexRef,
        query: z.string().min(1).max(1000).describe('words or an idea to look for'),
        file_id: fileId.optional().describe('only this video of the index'),
        kinds: z
          .array(z.enum(SEGMENT_KINDS))
          .max(SEGMENT_KINDS.length)
          .optional()
          .describe('only these kinds of moments'),
        offset: z.number().int().min(0).optional().describe('moments to skip: next_offset of the previous page'),
        limit: z.number().int().min(1).max(50).optional().describe('moments per page, 1 to 50 (default 10)'),
        frames: frames(3),
      },
      outputSchema: {
        index_id: z.string(),
        query: z.string(),
        moments: z.array(
          Moment.extend({
            matched: z.string().describe('why it matched: keyword, meaning (embedding similarity) or both'),
          }),
        ),
        ...paging,
        credits_used: z.number().describe('always 0: searching is free'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    wrap(onError, async (a) => {
      const idx = await backend.resolveIndex(a.index);
      const page = await backend.search({
        index: idx.index_id,
        q: a.query,
        video: a.file_id,
        kinds: a.kinds?.join(','),
        limit: a.limit ?? 10,
        offset: a.offset,
      });
      const moments = page.moments.map((m) => ({ ...momentOf(m), matched: m.matched }));
      return result(
        {
          index_id: page.index_id,
          query: page.q,
          moments,
          total: page.total,
          offset: page.offset,
          limit: page.limit,
          next_offset: page.next_offset,
          credits_used: page.credits_used,
        },
        await imagesOf(backend, moments, a.frames ?? 3),
      );
    }),
  );

  tool(
    'ask',
    {
      title: 'Ask about videos',
      description:
        'Answers a question about the videos of an index from what was seen, said and written in them, citing moments with their times; the cited frames come back as images. ' +
        'Narrow it with file_id (one video) and target (a moment or range: "75", "1:15", "1:00-1:30"). ' +
        'With json (field name → description) the answer is a JSON object with exactly those keys, also given as `fields`. Costs credits, as POST /inquire does.',
      inputSchema: {
        index: indexRef,
        question: z.string().min(1).max(8000),
        file_id: fileId.optional().describe('only this video of the index'),
        target: z.string().max(64).optional().describe('a moment or range: seconds, mm:ss, hh:mm:ss, or a-b'),
        guidance: z.string().max(8000).optional().describe('how to answer: length, focus'),
        json: z
          .record(z.string(), z.string())
          .optional()
          .describe('structured output: field name → what the field should hold'),
        frames: frames(3),
      },
      outputSchema: {
        answer: z.string().describe('the answer; every time in it is one of the citations'),
        fields: z
          .record(z.string(), z.unknown())
          .nullable()
          .describe('with json: the answer as an object of those fields; else null'),
        citations: z.array(Moment).describe('the moments the answer is based on, best first'),
        model: z.string().describe('who wrote the answer'),
        credits_used: z.number(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    wrap(onError, async (a, extra) => {
      const idx = await backend.resolveIndex(a.index);
      const answer = await backend.ask(
        {
          index: idx.index_id,
          prompt: a.question,
          ...(a.guidance !== undefined && { guidance: a.guidance }),
          ...(a.target !== undefined && { target: a.target }),
          ...(a.file_id !== undefined && { target_video: a.file_id }),
          ...(a.json !== undefined && { json: a.json }),
        },
        extra.signal,
      );
      const citations = answer.evidence.map(momentOf);
      return result(
        {
          answer: answer.output,
          fields: a.json ? fieldsOf(answer.output) : null,
          citations,
          model: answer.model,
          credits_used: answer.credits_used,
        },
        await imagesOf(backend, citations, a.frames ?? 3),
      );
    }),
  );

  tool(
    'get_transcript',
    {
      title: "A video's transcript",
      description:
        'The words spoken in a video (or its subtitles), as cues with start and end in seconds, in time order; paged. An error says when the video has no transcript.',
      inputSchema: { file_id: fileId, offset, limit: limit(MAX_CUES, DEFAULT_CUES) },
      outputSchema: {
        file_id: z.string(),
        cues: z.array(z.object({ start: z.number(), end: z.number(), text: z.string() })),
        ...paging,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    wrap(onError, async ({ file_id, offset: off, limit: lim }) => {
      const p = pageOf(await backend.transcript(file_id), off, lim ?? DEFAULT_CUES);
      return result({
        file_id,
        cues: p.items,
        total: p.total,
        offset: p.offset,
        limit: p.limit,
        next_offset: p.next_offset,
      });
    }),
  );

  tool(
    'describe_video',
    {
      title: 'Describe a video',
      description:
        'An account of what happens in one video, in order, with the times of its parts and the moments it rests on (in time order); the first frames come back as images. Costs what a question costs (it is asked as one).',
      inputSchema: { index: indexRef, file_id: fileId, frames: frames(4) },
      outputSchema: {
        index_id: z.string(),
        file_id: z.string(),
        account: z.string().describe('what happens, in order, with times'),
        moments: z.array(Moment).describe('the moments the account rests on, in time order'),
        model: z.string(),
        credits_used: z.number(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    wrap(onError, async (a, extra) => {
      const idx = await backend.resolveIndex(a.index);
      const answer = await backend.ask(
        { index: idx.index_id, prompt: DESCRIBE_PROMPT, target_video: a.file_id },
        extra.signal,
      );
      const moments = answer.evidence.map(momentOf).sort((x, y) => x.start - y.start || x.end - y.end);
      return result(
        {
          index_id: idx.index_id,
          file_id: a.file_id,
          account: answer.output,
          moments,
          model: answer.model,
          credits_used: answer.credits_used,
        },
        await imagesOf(backend, moments, a.frames ?? 4),
      );
    }),
  );

  tool(
    'list_people',
    {
      title: 'List the people of an index',
      description:
        'The people seen in the videos of an index (faces grouped by likeness across videos), most time on screen first, with their name if one was given, seconds on screen and the videos they appear in. Empty when the faces analyzer is off.',
      inputSchema: { index: indexRef, offset, limit: limit(MAX_PAGE, DEFAULT_PAGE) },
      outputSchema: {
        index_id: z.string(),
        people: z.array(
          z.object({
            person_id: z.string(),
            name: z.string().nullable(),
            appearance_count: z.number().int(),
            seconds: z.number(),
            file_ids: z.array(z.string()),
            thumbnail_url: z.string().describe('signed link to a JPEG of the face'),
          }),
        ),
        ...paging,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    wrap(onError, async ({ index, offset: off, limit: lim }) => {
      const idx = await backend.resolveIndex(index);
      const p = pageOf(await backend.people(idx.index_id), off, lim);
      return result({
        index_id: idx.index_id,
        people: p.items.map((x) => ({
          person_id: x.person_id,
          name: x.name,
          appearance_count: x.appearance_count,
          seconds: x.seconds,
          file_ids: x.videos,
          thumbnail_url: x.thumbnail_url,
        })),
        total: p.total,
        offset: p.offset,
        limit: p.limit,
        next_offset: p.next_offset,
      });
    }),
  );

  tool(
    'remove_video',
    {
      title: 'Remove a video',
      description:
        'Removes a video from an index for good: its file, its analysis and everything found in it. A download or analysis under way stops.',
      inputSchema: { index: indexRef, file_id: fileId },
      outputSchema: { index_id: z.string(), file_id: z.string(), removed: z.boolean() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    wrap(onError, async ({ index, file_id }) => {
      const idx = await backend.resolveIndex(index);
      await backend.remove(idx.index_id, file_id);
      return result({ index_id: idx.index_id, file_id, removed: true });
    }),
  );

  return server;
}
