/** Downloads of a video's analysis: subtitles (WebVTT, SubRip) and everything found (JSON). */
import { Elysia, t } from 'elysia';
import { badRequest } from '../../errors';
import { attachment } from '../../exports/formats';
import type { Service } from '../../service';
import type { User } from '../../storage/rows';
import { authentication } from '../auth';
import { ErrorBody } from '../models';

const params = t.Object({ file_id: t.String({ description: 'file_id of the video' }) });
const query = t.Object({
  token: t.Optional(t.String({ description: 'user authentication token (or an Authorization: Bearer header)' })),
  download: t.Optional(
    t.String({ description: '"true" adds Content-Disposition: attachment (named after the video); default "false"' }),
  ),
});

/** The `download` switch: "true" or "false" (anything else is a 400, as include_deleted). */
function asDownload(v: string | undefined): boolean {
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  throw badRequest('query parameter "download" must be "true" or "false"');
}

const Insights = t.Object({
  video_id: t.String(),
  index_id: t.String(),
  file_name: t.String(),
  status: t.String(),
  metadata: t.Record(t.String(), t.Any(), {
    description:
      'duration (s), fps, width, height, video_codec, has_audio, file_size (bytes), file_type, sha256, upload_time',
  }),
  engines: t.Record(t.String(), t.Any(), { description: 'per analyzer: the engine used and what it found' }),
  people: t.Array(
    t.Object({
      person_id: t.String(),
      name: t.Union([t.String(), t.Null()]),
      appearances: t.Array(t.Object({ start: t.Number(), end: t.Number() })),
    }),
    { description: 'people of the index seen in this video (faces analyzer), with their spans; empty when none' },
  ),
  segments: t.Record(
    t.String(),
    t.Array(
      t.Object({
        start: t.Number(),
        end: t.Number(),
        text: t.String(),
        confidence: t.Union([t.Number(), t.Null()]),
        extra: t.Optional(t.Record(t.String(), t.Any())),
      }),
    ),
    {
      description: 'every segment, by kind (shot, ocr, object, speech, transcript, …), each in time order',
    },
  ),
});

export function exportRoutes(s: Service) {
  const subtitles =
    (format: 'vtt' | 'srt') =>
    async ({ params, query, user }: { params: { file_id: string }; query: { download?: string }; user: User }) => {
      const download = asDownload(query.download);
      const { video, text } = await s.exports.transcript(user, params.file_id, format);
      const headers: Record<string, string> = {
        'content-type': format === 'vtt' ? 'text/vtt; charset=utf-8' : 'application/x-subrip; charset=utf-8',
      };
      if (download) headers['content-disposition'] = attachment(video.fileName, `.${format}`);
      return new Response(text, { headers });
    };
  const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };
  return new Elysia({ name: 'routes/exports' })
    .use(authentication(s.accounts))
    .get('/videos/:file_id/transcript.vtt', subtitles('vtt'), {
      auth: true,
      params,
      query,
      response: errors,
      detail: {
        operationId: 'exportTranscriptVtt',
        tags: ['exports'],
        summary: "A video's transcript as WebVTT subtitles (404 when it has none)",
        responses: {
          200: {
            description: 'WebVTT subtitles, one cue per transcript segment',
            content: { 'text/vtt': { schema: { type: 'string' } } },
          },
        },
      },
    })
    .get('/videos/:file_id/transcript.srt', subtitles('srt'), {
      auth: true,
      params,
      query,
      response: errors,
      detail: {
        operationId: 'exportTranscriptSrt',
        tags: ['exports'],
        summary: "A video's transcript as SubRip subtitles (404 when it has none)",
        responses: {
          200: {
            description: 'SubRip subtitles, one cue per transcript segment',
            content: { 'application/x-subrip': { schema: { type: 'string' } } },
          },
        },
      },
    })
    .get(
      '/videos/:file_id/insights.json',
      async ({ params, query, set, user }) => {
        const download = asDownload(query.download);
        const out = await s.exports.insights(user, params.file_id);
        if (download) set.headers['content-disposition'] = attachment(out.file_name, '.insights.json');
        return out;
      },
      {
        auth: true,
        params,
        query,
        response: { 200: Insights, ...errors },
        detail: {
          operationId: 'exportInsights',
          tags: ['exports'],
          summary: 'Everything the analysis found in a video: segments of every kind, metadata, engines',
        },
      },
    );
}
