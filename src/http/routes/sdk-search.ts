/**
 * POST /search in the hosted API's shape (its SDK's `search`): `project_id` = token + index name,
 * a text `query` or an `image` (URL or base64; the image wins). GET /search is the paged form.
 */
import { Elysia, t } from 'elysia';
import { splitProjectId } from '../../accounts/project';
import { badRequest } from '../../errors';
import { MAX_NUMARGS } from '../../flows/sdk-search';
import type { Service } from '../../service';
import { ErrorBody, TOKEN_PLACEHOLDER } from '../models';
import { named } from '../openapi/schema';

export const SdkMatchSchema = t.Array(t.Union([t.String(), t.Integer()]), {
  minItems: 5,
  maxItems: 5,
  description:
    '[file_id, start_frame, end_frame, "m min, s sec", "m min, s sec"]; frames counted from 0 at the video\'s fps',
});

export const SdkSearchOutput = named(
  'SdkSearchOutput',
  t.Object({
    embeddings: t.Array(SdkMatchSchema, { description: 'what is seen: shots, captions, objects, faces' }),
    transcript: t.Array(SdkMatchSchema, { description: 'what is said' }),
    ocr: t.Array(SdkMatchSchema, { description: 'what is written on screen' }),
  }),
);

export const SdkSearchResponse = named(
  'SdkSearchResponse',
  t.Object({
    status: t.String({ description: 'always complete' }),
    output: SdkSearchOutput,
    matched_by: t.Array(t.String(), {
      description:
        'additive: "text" for a text query; for an image the readers that found something: faces, objects, colours, text (OCR), frame (perceptual hash), caption (vision model)',
    }),
    image: t.Optional(
      t.Object(
        {
          width: t.Integer(),
          height: t.Integer(),
          text: t.String({ description: 'text read from the image (OCR)' }),
          objects: t.Array(t.Object({ label: t.String(), colours: t.Array(t.String()) })),
          faces: t.Integer({ description: 'faces found in the image' }),
          caption: t.Union([t.String(), t.Null()], { description: "the vision model's caption (when configured)" }),
          skipped: t.Record(t.String(), t.String(), { description: 'readers that could not run, with why' }),
        },
        { description: 'additive: what was read from a query image' },
      ),
    ),
  }),
);

const SdkSearchBody = named(
  'SdkSearchRequest',
  t.Object(
    {
      project_id: t.String({ description: 'your token followed directly by the index name (or index_id)' }),
      api: t.Optional(t.String({ description: 'your token (the SDK sends it; project_id already carries it)' })),
      query: t.Optional(t.String({ maxLength: 1000, description: 'words or an idea to look for' })),
      image: t.Optional(
        t.String({
          description:
            'an http(s) URL of an image (fetched under the download rules) or the base64 of an image file; wins over query',
        }),
      ),
      numargs: t.Optional(t.Integer({ description: `matches per list, 1 to ${MAX_NUMARGS} (default 5)` })),
      threshold: t.Optional(
        t.Number({ description: 'distance cut, 0 (only the best) to 1000 (everything, the default)' }),
      ),
      subindex: t.Optional(
        t.Array(t.String({ maxLength: 80 }), { maxItems: 200, description: 'file ids to search in' }),
      ),
    },
    {
      examples: [
        {
          project_id: `${TOKEN_PLACEHOLDER}demo`,
          api: TOKEN_PLACEHOLDER,
          query: 'a red car',
          numargs: 5,
          threshold: 1000,
        },
      ],
    },
  ),
);

export function sdkSearchRoutes(s: Service) {
  return new Elysia({ name: 'routes/sdk-search' }).post(
    '/search',
    async ({ body, request }) => {
      const ref = await splitProjectId(s.accounts, body.project_id);
      if (!ref.index) throw badRequest('project_id must be your token followed by the index name');
      return s.flows.search.search(ref.user, { ...body, index: ref.index }, request.signal);
    },
    {
      body: SdkSearchBody,
      response: {
        200: SdkSearchResponse,
        400: ErrorBody,
        401: ErrorBody,
        403: ErrorBody,
        404: ErrorBody,
        413: ErrorBody,
        501: ErrorBody,
        502: ErrorBody,
      },
      detail: {
        operationId: 'searchSdk',
        tags: ['inquire'],
        summary: "Search an index by text or by image, in the hosted API's shape",
        description:
          'The SDK\'s `search`: matches in three lists (seen, said, written), each `[file_id, start_frame, end_frame, "m min, s sec", "m min, s sec"]`. A text query is ranked by the same retrieval core as GET /search. An image is read by the analysis models (faces → people, objects and their colours, on-screen text, a perceptual hash against the sampled frames, and a vision model\'s caption when one is configured); `matched_by` says which found something. Bodies up to --max-image-body-bytes (a full-HD PNG as base64 fits). Free of charge.',
      },
    },
  );
}
