/** Downloads of a video's analysis: subtitles (WebVTT, SubRip) and everything found (JSON). */
import { Elysia, t } from 'elysia';
import { attachment } from '../../exports/formats';
import type { Service } from '../../service';
import { tokenOf } from '../auth';
import { ErrorBody } from '../models';

const params = t.Object({ file_id: t.String({ description: 'file_id of the video' }) });
const query = t.Object({
  token: t.Optional(t.String({ description: 'user authentication token (or an Authorization: Bearer header)' })),
  download: t.Optional(t.String({ enum: ['true', 'false'], description: '"true" adds Content-Disposition: attachment (named after the video)' })),
});

const Insights = t.Object({
  video_id: t.String(),
  index_id: t.String(),
  file_name: t.String(),
  status: t.String(),
  metadata: t.Record(t.String(), t.Any(), { description: 'duration (s), fps, width, height, video_codec, has_audio, file_size (bytes), file_type, sha256, upload_time' }),
  engines: t.Record(t.String(), t.Any(), { description: 'per analyzer: the engine used and what it found' }),
  segments: t.Record(t.String(), t.Array(t.Object({ start: t.Number(), end: t.Number(), text: t.String(), confidence: t.Union([t.Number(), t.Null()]), extra: t.Optional(t.Record(t.String(), t.Any())) })), {
    description: 'every segment, by kind (shot, ocr, object, speech, transcript, …), each in time order',
  }),
});

export function exportRoutes(s: Service) {
  const subtitles = (format: 'vtt' | 'srt') =>
    ({ params, query, request }: { params: { file_id: string }; query: { token?: string; download?: string }; request: Request }) => {
      const user = s.accounts.authenticate(tokenOf(query.token, request));
      const { video, text } = s.exports.transcript(user, params.file_id, format);
      const headers: Record<string, string> = { 'content-type': format === 'vtt' ? 'text/vtt; charset=utf-8' : 'application/x-subrip; charset=utf-8' };
      if (query.download === 'true') headers['content-disposition'] = attachment(video.fileName, `.${format}`);
      return new Response(text, { headers });
    };
  const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };
  return new Elysia({ name: 'routes/exports' })
    .get('/videos/:file_id/transcript.vtt', subtitles('vtt'), {
      params,
      query,
      response: { 200: t.String({ description: 'WebVTT' }), ...errors },
      detail: { operationId: 'exportTranscriptVtt', tags: ['exports'], summary: "A video's transcript as WebVTT subtitles (404 when it has none)" },
    })
    .get('/videos/:file_id/transcript.srt', subtitles('srt'), {
      params,
      query,
      response: { 200: t.String({ description: 'SubRip' }), ...errors },
      detail: { operationId: 'exportTranscriptSrt', tags: ['exports'], summary: "A video's transcript as SubRip subtitles (404 when it has none)" },
    })
    .get(
      '/videos/:file_id/insights.json',
      ({ params, query, request, set }) => {
        const user = s.accounts.authenticate(tokenOf(query.token, request));
        const out = s.exports.insights(user, params.file_id);
        if (query.download === 'true') set.headers['content-disposition'] = attachment(out.file_name, '.insights.json');
        return out;
      },
      {
        params,
        query,
        response: { 200: Insights, ...errors },
        detail: { operationId: 'exportInsights', tags: ['exports'], summary: "Everything the analysis found in a video: segments of every kind, metadata, engines" },
      },
    );
}
