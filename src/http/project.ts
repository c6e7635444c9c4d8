/**
 * Who asks and about which index, for the endpoints that take either the spec's `token` + `index`
 * or the hosted API's `project_id` (token and index name written together; see
 * accounts/project.ts). The index may be a name or an index_id either way; another user's index
 * is a 404 like a missing one.
 */
import { splitProjectId } from '../accounts/project';
import { badRequest } from '../errors';
import type { Service } from '../service';
import type { MediaIndex, User } from '../storage/rows';
import { tokenOf } from './auth';

export interface IndexRefFields {
  token?: string;
  index?: string;
  project_id?: string;
}

export async function userAndIndex(
  s: Service,
  body: IndexRefFields,
  request: Request,
): Promise<{ user: User; index: MediaIndex }> {
  if (body.index === undefined && body.project_id !== undefined) {
    const p = await splitProjectId(s.accounts, body.project_id);
    if (p.index === '') throw badRequest('project_id is your token followed by the name (or index_id) of an index');
    return { user: p.user, index: await s.indexes.resolve(p.user, p.index, { byName: true }) };
  }
  const user = await s.accounts.authenticate(tokenOf(body.token, request));
  if (body.index === undefined)
    throw badRequest(
      'field "index" is required: the index_id or name of an index (or send "project_id": token + index name)',
    );
  return { user, index: await s.indexes.resolve(user, body.index, { byName: true }) };
}
