/**
 * Flows in the hosted API's shape (its SDK's `run(flow, ...)`): POST /core/<name> with the
 * token and index (by name or index_id) in the body. Unknown names are 404, as the SDK expects.
 */
import { Elysia, t } from 'elysia';
import { FLOW_NAMES } from '../../flows';
import type { Service } from '../../service';
import { authentication } from '../auth';
import { ErrorBody, TOKEN_PLACEHOLDER } from '../models';
import { named } from '../openapi/schema';

const seconds = (description: string) => t.Optional(t.Number({ minimum: 0, description }));

const FlowBody = named(
  'FlowRequest',
  t.Object(
    {
      token: t.Optional(t.String({ description: 'user authentication token (or an Authorization: Bearer header)' })),
      index: t.String({ description: 'index name or index_id' }),
      video_id: t.Optional(
        t.String({ maxLength: 80, description: 'file_id (clipping, scene-detection, content-moderation)' }),
      ),
      prompt: t.Optional(t.String({ maxLength: 1000, description: 'clipping: what the clips should show' })),
      num_clips: t.Optional(t.Integer({ description: 'clipping: how many clips, 1 to 10 (default 3)' })),
      length: seconds('clipping: the length wanted, in seconds (a soft target; default 15)'),
      min_length: seconds('clipping: shortest clip, in seconds (default 0)'),
      max_length: seconds('clipping: longest clip, in seconds (default 60)'),
      query: t.Optional(t.String({ maxLength: 1000, description: 'search: words to look for' })),
      image: t.Optional(t.String({ description: 'search: an http(s) image URL or the base64 of an image file' })),
      num_args: t.Optional(t.Integer({ description: 'search: matches per list (default 5)' })),
      threshold: t.Optional(t.Number({ description: 'search: distance cut, 0 to 1000 (default 1000)' })),
      subindex: t.Optional(t.Array(t.String({ maxLength: 80 }), { maxItems: 200, description: 'search: file ids' })),
    },
    {
      examples: [
        {
          token: TOKEN_PLACEHOLDER,
          index: 'demo',
          video_id: '<file_id>',
          prompt: 'the goal',
          min_length: 5,
          max_length: 30,
        },
      ],
    },
  ),
);

const FlowResponse = named(
  'FlowResponse',
  t.Object({
    status: t.String({ description: 'always complete' }),
    video_id: t.Union([t.String(), t.Null()], { description: 'the video the flow ran on (null for search)' }),
    note: t.Optional(
      t.String({ description: 'clipping: why fewer clips than num_clips were returned (absent when all were)' }),
    ),
    output: t.Unknown({
      description:
        'search: {embeddings, transcript, ocr}; clipping: {clip_1: {video_id, start_time, end_time, overview, …}, …}; scene-detection: {scenes: […]}; content-moderation: {flagged, flags: [{start_time, end_time, category, score, model}], frames_checked, models, skipped}',
    }),
  }),
);

export function flowRoutes(s: Service) {
  return new Elysia({ name: 'routes/flows' }).use(authentication(s.accounts)).post(
    '/core/:name',
    ({ params, body, request, user }) => {
      s.flows.checkName(params.name);
      return s.flows.run(user, params.name, body as Record<string, unknown>, request.signal);
    },
    {
      auth: true,
      params: t.Object({ name: t.String({ description: `the flow: ${FLOW_NAMES.join(', ')}` }) }),
      body: FlowBody,
      response: {
        200: FlowResponse,
        400: ErrorBody,
        401: ErrorBody,
        403: ErrorBody,
        404: ErrorBody,
        413: ErrorBody,
        501: ErrorBody,
        502: ErrorBody,
      },
      detail: {
        operationId: 'runFlow',
        tags: ['flows'],
        summary: "Run a flow (search, clipping, scene-detection, content-moderation) in the hosted API's shape",
        description:
          "The SDK's `run(flow, ...)`. `search`: as POST /search. `clipping`: the best moments of `video_id` for `prompt`, cut at shot boundaries within `min_length`/`max_length` (a single shot longer than `max_length` is cut inside, and shots that cannot give `min_length` are cut across, both marked `cut_within_shot`; fewer clips than `num_clips` come with a `note` that says why), each with an overview from the evidence. `scene-detection`: consecutive shots that look like one place, or show the same things, grouped into scenes described from captions, objects, on-screen text and speech. `content-moderation`: sampled frames judged by an NSFW classifier that runs here (nsfwjs MobileNetV2; nudity and sexual content only) and, with a vision model server configured, by that model too; each flag names its model. 404 for an unknown flow.",
      },
    },
  );
}
