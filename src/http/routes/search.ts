/** GET /search: ranked moments of an index (or one video), paged; no answer is composed, no credit charged. */
import { Elysia, t } from 'elysia';
import type { Service } from '../../service';
import { SEARCH_CANDIDATES, SEARCH_MAX_LIMIT } from '../../search/service';
import { authentication } from '../auth';
import { ErrorBody, Evidence } from '../models';

export const SearchQuery = t.Object({
  token: t.Optional(t.String({ description: 'user authentication token (or an Authorization: Bearer header)' })),
  index: t.String({ description: 'index_id or name of the index' }),
  q: t.String({ maxLength: 1000, description: 'words or an idea to look for' }),
  video: t.Optional(t.String({ maxLength: 64, description: 'file_id of one video of the index to search in' })),
  kinds: t.Optional(
    t.String({
      maxLength: 200,
      description: 'comma-separated segment kinds to keep: shot, ocr, object, speech, transcript, caption, audio',
    }),
  ),
  limit: t.Optional(t.Integer({ description: `moments per page, 1 to ${SEARCH_MAX_LIMIT} (default 20)` })),
  offset: t.Optional(
    t.Integer({
      description: `moments to skip, 0 to ${SEARCH_CANDIDATES - 1} (next_offset of the previous page; default 0)`,
    }),
  ),
});

const Moment = t.Composite([
  Evidence,
  t.Object({
    matched: t.String({
      description: 'why it matched: keyword (a word of the query), meaning (embedding similarity) or both',
      enum: ['keyword', 'meaning', 'both'],
    }),
    relevance: t.Number({
      description:
        'how clearly the moment bears on the query, 0 to 1, on the same scale for every kind: 0.5 and above clearly (a word of the query, the rarer words weighing more, or a close meaning); under 0.2 noise, never returned',
    }),
  }),
]);

export const SearchResponse = t.Object({
  index_id: t.String(),
  q: t.String(),
  moments: t.Array(Moment, { description: 'best first' }),
  total: t.Integer({ description: `moments found in all pages (at most ${SEARCH_CANDIDATES})` }),
  offset: t.Integer(),
  limit: t.Integer(),
  next_offset: t.Union([t.Integer(), t.Null()], { description: 'offset of the next page; null on the last one' }),
  credits_used: t.Integer({ description: 'always 0: searching is free, answers cost credits' }),
  weak_only: t.Boolean({
    description:
      'true when moments were found but none clearly bears on the query (every relevance under 0.5): they are the closest there are. When some do, the weaker ones are left out.',
  }),
});

export function searchRoutes(s: Service) {
  return new Elysia({ name: 'routes/search' }).use(authentication(s.accounts)).get(
    '/search',
    ({ query, user }) => {
      return s.search.search(user, query);
    },
    {
      auth: true,
      query: SearchQuery,
      response: { 200: SearchResponse, 400: ErrorBody, 401: ErrorBody, 404: ErrorBody },
      detail: {
        operationId: 'searchMoments',
        tags: ['inquire'],
        summary: 'Ranked moments of an index that match a query (no answer composed; free)',
        description: `The moments /inquire would build an answer from (keyword search and embedding similarity, every segment kind scored on one relevance scale), each with its video, time span, kind, text, score (its relevance), frame and why it matched. When some moments clearly match (relevance ≥ 0.5), weaker ones are left out; when none does, the closest are returned with \`weak_only: true\`. Paged with \`limit\` and \`offset\` over the best ${SEARCH_CANDIDATES}. Free of charge: credits pay for composed answers.`,
      },
    },
  );
}
