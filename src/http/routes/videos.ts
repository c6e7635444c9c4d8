/**
 * GET /videos/{file_id}/segments: what the analysis found in one video (shots, speech, on-screen
 * text, objects…) and its sampled frames, for the web page's timeline. Authorised by the owner's
 * token (Bearer header or `?token=`); another user's video, or one in a deleted index, is 404.
 */
import { Elysia, t } from 'elysia';
import type { Service } from '../../service';
import { authentication, originOf } from '../auth';
import { REANALYZABLE } from '../../analysis/analyzers';
import { ErrorBody, TOKEN_PLACEHOLDER } from '../models';
import { named } from '../openapi/schema';

const Segment = named(
  'Segment',
  t.Object({
    kind: t.String({
      description:
        "shot, speech, transcript, ocr (on-screen text), object, caption (a vision model's description of a shot, --captioner), …",
    }),
    start: t.Number({ description: 'seconds from the start' }),
    end: t.Number({ description: 'seconds from the start' }),
    text: t.String({ description: 'what was found: a shot description, a transcript, the text read, an object label' }),
    confidence: t.Union([t.Number(), t.Null()]),
  }),
);
const SegmentsResponse = named(
  'VideoSegments',
  t.Object({
    segments: t.Array(Segment, { description: 'ordered by start' }),
    frames: t.Array(
      t.Object({
        t: t.Number({ description: 'seconds from the start' }),
        url: t.String({ description: 'signed URL of the JPEG' }),
      }),
      { description: 'the sampled frames, ordered by time' },
    ),
  }),
);

const ReanalyzeBody = named(
  'ReanalyzeRequest',
  t.Object(
    {
      token: t.Optional(
        t.String({
          description:
            'user authentication token (60 characters, or 64 for tokens issued before); may be left out when an `Authorization: Bearer` header is sent',
        }),
      ),
      analyzers: t.Optional(
        t.Array(t.String({ minLength: 1, maxLength: 32 }), {
          maxItems: 8,
          description: `stages to run again: ${REANALYZABLE.join(', ')} ("transcripts" = speech). Default: every stage whose engine or model changed since the video was analysed, or that was skipped (its server was down). Embeddings follow any stage that adds segments.`,
        }),
      ),
    },
    { examples: [{ token: TOKEN_PLACEHOLDER, analyzers: ['captions'] }] },
  ),
);
const ReanalyzeResponse = named(
  'ReanalyzeResult',
  t.Object({
    file_id: t.String({ description: 'the video' }),
    status: t.String({
      description: 'always "processing": the reanalysis is queued; progress shows on the resource',
      examples: ['processing'],
    }),
    analyzers: t.Array(t.String(), {
      description: 'the stages that will run, in pipeline order',
      examples: [['captions', 'embeddings']],
    }),
  }),
);

export function videoRoutes(s: Service) {
  return new Elysia({ name: 'routes/videos' })
    .use(authentication(s.accounts))
    .post(
      '/videos/:file_id/reanalyze',
      async ({ params, body, set, user }) => {
        const planned = await s.reanalyze.request(user, params.file_id, body?.analyzers);
        set.status = 202;
        return { ...planned, status: 'processing' };
      },
      {
        auth: true,
        params: t.Object({ file_id: t.String({ description: 'the video (`file_id` of its resource)' }) }),
        body: ReanalyzeBody,
        response: { 202: ReanalyzeResponse, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        detail: {
          tags: ['indexes'],
          operationId: 'reanalyzeVideo',
          summary: 'Run analysis stages of an indexed video again (e.g. captions after a captioner was configured)',
          description:
            'Only the named stages run; the other segments stay. The resource is `processing` with progress until the stages are done, then `ready`; `metadata.analysis.<kind>.producer` says which engine and model produced each kind. 409 while an analysis of the video is under way, when nothing changed, or when analysis is off.',
        },
      },
    )
    .get(
      '/videos/:file_id/segments',
      async ({ params, query, request, user }) => {
        // `from`: only the recent part (a live stream's tile asks for its last minutes).
        const { video, segments, frames } = await s.videos.timeline(user, params.file_id, query.from);
        const origin = originOf(request);
        return {
          segments,
          frames: frames.map((f) => ({ t: f.t, url: origin + s.links.sign(`/media/${video.id}/frames/${f.file}`) })),
        };
      },
      {
        auth: true,
        params: t.Object({ file_id: t.String({ description: 'the video (`file_id` of its resource)' }) }),
        query: t.Object({
          token: t.Optional(
            t.String({ description: 'user authentication token (or an `Authorization: Bearer` header)' }),
          ),
          from: t.Optional(
            t.Numeric({
              minimum: 0,
              description:
                'only segments ending at or after this second, and frames from it on (e.g. the last minutes of a live stream)',
            }),
          ),
        }),
        response: { 200: SegmentsResponse, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
        detail: {
          operationId: 'getVideoSegments',
          tags: ['indexes'],
          summary: "A video's analysed segments and sampled frames (for a timeline)",
          description:
            "Authorised by the owner's token (Bearer header or `token`). Empty lists while the analysis has not stored anything yet.",
        },
      },
    );
}
