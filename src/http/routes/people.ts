/**
 * People of an index (faces grouped by likeness): list, one person's appearances, name, merge,
 * split an appearance out, and a face thumbnail. Authorised by the owner's token (`token` in the
 * query or JSON body, or a Bearer header); the thumbnail also by the signed link the listing gives.
 * Another user's index, a deleted index and a person of another index are all 404.
 */
import { Elysia, t } from 'elysia';
import { forbidden } from '../../errors';
import type { PersonView } from '../../people/service';
import type { Service } from '../../service';
import { authentication, originOf } from '../auth';
import { ErrorBody, TOKEN_PLACEHOLDER } from '../models';
import { named } from '../openapi/schema';

const Person = named(
  'Person',
  t.Object({
    person_id: t.String({ description: 'opaque id of the person within the index' }),
    name: t.Union([t.String(), t.Null()], { description: 'the name given with PUT, or null' }),
    appearance_count: t.Integer({ description: 'appearances: a face tracked through one shot is one appearance' }),
    seconds: t.Number({ description: 'seconds on screen, summed over the appearances' }),
    videos: t.Array(t.String(), { description: 'file_ids of the videos the person appears in' }),
    thumbnail_url: t.String({ description: "signed URL of a JPEG of the person's face" }),
  }),
);
const Appearance = named(
  'PersonAppearance',
  t.Object({
    appearance_id: t.Integer({ description: 'id of the appearance (for split)' }),
    video_id: t.String(),
    file_name: t.String(),
    start: t.Number({ description: 'seconds from the start of the video' }),
    end: t.Number({ description: 'seconds from the start of the video' }),
  }),
);
const PersonDetail = named(
  'PersonDetail',
  t.Composite([
    Person,
    t.Object({ appearances: t.Array(Appearance, { description: 'in upload order of the videos, then time' }) }),
  ]),
);
const PERSON_PLACEHOLDER = '<person_id: from GET /indexes/{index_id}/people>';
const token = t.Optional(t.String({ description: 'user authentication token (or an Authorization: Bearer header)' }));
const params = t.Object({
  index_id: t.String({ description: 'index_id of the index' }),
  person_id: t.String({ description: 'person_id from the people listing' }),
});
const errors = { 400: ErrorBody, 401: ErrorBody, 404: ErrorBody };
const error = (description: string) => ({ description, content: { 'application/json': { schema: ErrorBody } } });

export function peopleRoutes(s: Service) {
  const withUrl = (v: PersonView, request: Request) => {
    const { thumbnail, appearances, ...rest } = v;
    return { ...rest, appearance_count: appearances, thumbnail_url: originOf(request) + s.links.sign(thumbnail) };
  };
  return new Elysia({ name: 'routes/people' })
    .use(authentication(s.accounts))
    .get(
      '/indexes/:index_id/people',
      async ({ params, request, user }) => (await s.people.list(user, params.index_id)).map((p) => withUrl(p, request)),
      {
        auth: true,
        params: t.Object({ index_id: t.String({ description: 'index_id of the index' }) }),
        query: t.Object({ token }),
        response: { 200: t.Array(Person), 401: ErrorBody, 404: ErrorBody },
        detail: {
          tags: ['people'],
          operationId: 'listPeople',
          summary: 'The people of an index: faces grouped by likeness across its videos',
          description:
            'Most seconds on screen first. Empty while no video of the index has been analysed, or when the faces analyzer is off.',
        },
      },
    )
    .get(
      '/indexes/:index_id/people/:person_id',
      async ({ params, request, user }) => {
        const p = await s.people.get(user, params.index_id, params.person_id);
        const { appearances_list, ...rest } = p;
        return { ...withUrl(rest, request), appearances: appearances_list };
      },
      {
        auth: true,
        params,
        query: t.Object({ token }),
        response: { 200: PersonDetail, 401: ErrorBody, 404: ErrorBody },
        detail: { tags: ['people'], operationId: 'getPerson', summary: "A person's appearances (video, start, end)" },
      },
    )
    .put(
      '/indexes/:index_id/people/:person_id',
      async ({ params, body, request, user }) =>
        withUrl(await s.people.rename(user, params.index_id, params.person_id, body.name), request),
      {
        auth: true,
        params,
        body: named(
          'NamePersonBody',
          t.Object(
            {
              token,
              name: t.Union([t.String({ maxLength: 1000 }), t.Null()], {
                description: 'the name (1–100 characters), or null to remove it',
              }),
            },
            { examples: [{ token: TOKEN_PLACEHOLDER, name: 'Ana' }] },
          ),
        ),
        response: { 200: Person, ...errors },
        detail: {
          tags: ['people'],
          operationId: 'namePerson',
          summary: 'Name, rename or un-name a person (nothing else changes)',
        },
      },
    )
    .post(
      '/indexes/:index_id/people/:person_id/merge',
      async ({ params, body, request, user }) =>
        withUrl(await s.people.merge(user, params.index_id, params.person_id, body.into), request),
      {
        auth: true,
        params,
        body: named(
          'MergePeopleBody',
          t.Object(
            { token, into: t.String({ description: 'person_id of the person that keeps the appearances' }) },
            { examples: [{ token: TOKEN_PLACEHOLDER, into: PERSON_PLACEHOLDER }] },
          ),
        ),
        response: { 200: Person, ...errors },
        detail: {
          tags: ['people'],
          operationId: 'mergePeople',
          summary: 'Merge a person into another (the same person grouped twice)',
          description:
            'All appearances move to `into`; the merged person is removed. A name on only one side is kept; with two names, the name of `into`.',
        },
      },
    )
    .post(
      '/indexes/:index_id/people/:person_id/split',
      async ({ params, body, request, user }) =>
        withUrl(await s.people.split(user, params.index_id, params.person_id, body.appearance_id), request),
      {
        auth: true,
        params,
        body: named(
          'SplitPersonBody',
          t.Object(
            { token, appearance_id: t.Integer({ description: 'an appearance_id of this person (GET the person)' }) },
            { examples: [{ token: TOKEN_PLACEHOLDER, appearance_id: 1 }] },
          ),
        ),
        response: { 200: Person, ...errors },
        detail: {
          tags: ['people'],
          operationId: 'splitPerson',
          summary: 'Move a wrongly grouped appearance out into a new, unnamed person',
          description: 'Answers with the new person.',
        },
      },
    )
    .get(
      '/indexes/:index_id/people/:person_id/thumbnail',
      async ({ params, query, user }) => {
        // No user: a signed link (the linkOrAuth macro), checked here for this path.
        if (user === null) {
          const path = `/indexes/${params.index_id}/people/${params.person_id}/thumbnail`;
          const verdict = s.links.verify(path, query.expires, query.sig);
          if (verdict === 'expired')
            throw forbidden('this thumbnail link has expired; list the people again for a fresh one');
          if (verdict === 'invalid') throw forbidden('this thumbnail link is not valid');
        }
        const jpeg = await s.people.thumbnail(user, params.index_id, params.person_id);
        return new Response(jpeg, {
          headers: { 'content-type': 'image/jpeg', 'cache-control': 'private, max-age=3600' },
        });
      },
      {
        linkOrAuth: true,
        params,
        query: t.Object({ token, expires: t.Optional(t.String()), sig: t.Optional(t.String()) }),
        detail: {
          tags: ['people'],
          operationId: 'personThumbnail',
          summary: "A JPEG of the person's face",
          description:
            'The `thumbnail_url` of a person in the listing is a signed link to this; with a token it answers for the owner only.',
          responses: {
            200: {
              description: 'the face',
              content: { 'image/jpeg': { schema: { type: 'string', format: 'binary' } } },
            },
            401: error('neither a signed link nor a token'),
            403: error('the signed link is invalid or has expired'),
            404: error("no such person, a deleted index, or another user's"),
          } as never,
        },
      },
    );
}
