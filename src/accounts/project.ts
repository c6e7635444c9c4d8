/**
 * The hosted API's `project_id`: a user's token with an index name (or id) written straight after
 * it, no separator. The hosted product issues 60-character tokens; vidq issued 64 before and still
 * honours those. The split tries each length we issue: the token part is looked up by its hash
 * (constant-time compared), so a wrong split simply finds no token.
 */
import { unauthorized } from '../errors';
import type { User } from '../storage/rows';
import type { AccountService } from './service';

/** Token lengths vidq has issued, newest first. */
export const TOKEN_LENGTHS = [60, 64] as const;

export interface ProjectRef {
  user: User;
  /** The token part (a secret: never log or echo it). */
  token: string;
  /** The token's id (not a secret). */
  tokenId: string;
  /** The rest: an index name or index id, as the caller wrote it (may be empty). */
  index: string;
}

/** Splits a concatenated `project_id`; 401 when no prefix of an issued length is a live token. */
export async function splitProjectId(accounts: AccountService, projectId: unknown): Promise<ProjectRef> {
  if (typeof projectId !== 'string' || projectId.length === 0) throw unauthorized();
  for (const n of TOKEN_LENGTHS) {
    if (projectId.length < n) continue;
    const token = projectId.slice(0, n);
    try {
      return { ...(await accounts.authenticateToken(token)), token, index: projectId.slice(n) };
    } catch {
      // not a token of this length: try the next
    }
  }
  throw unauthorized('the token in project_id is unknown or revoked');
}
