/**
 * Users, API tokens and credits, over the catalog in either dialect (repositories/accounts.ts).
 * Tokens are stored as SHA-256 hashes only; balances change through single conditional UPDATEs
 * (so concurrent requests can never overspend) and every change is written to credit_events in
 * the same transaction.
 */
import { badRequest, notFound, unauthorized } from '../errors';
import { hashToken, newToken, newUserId, randomId, sameDigest } from '../ids';
import type { Catalog } from '../storage/catalog';
import {
  addToBalance,
  chargeBalance,
  insertToken,
  insertUserWithToken,
  refundBalance,
  revokeTokenByHash,
  type TokenRow,
  tokenByHash,
  tokenIsLive,
  userById,
  userCount,
} from '../storage/repositories/accounts';
import type { User } from '../storage/rows';

export interface NewUser {
  user: User;
  /** Shown once; only its hash is kept. */
  token: string;
}

export class AccountService {
  constructor(private readonly catalog: Catalog) {}

  async createUser(name: string, credits: number | null): Promise<NewUser> {
    const clean = name.trim();
    if (!clean || clean.length > 100 || /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(clean))
      throw badRequest('name must be 1 to 100 printable characters');
    if (credits !== null && (!Number.isSafeInteger(credits) || credits < 0))
      throw badRequest('credits must be a whole number ≥ 0');
    const user: User = { id: newUserId(), name: clean, credits, createdAt: new Date() };
    const { token, row } = tokenFor(user.id);
    await insertUserWithToken(this.catalog, user, row);
    return { user, token };
  }

  async createToken(userId: string): Promise<string> {
    await this.requireUser(userId);
    const { token, row } = tokenFor(userId);
    await insertToken(this.catalog, row);
    return token;
  }

  /** Revokes a token given in full. Returns false when it was unknown or already revoked. */
  revokeToken(token: string): Promise<boolean> {
    return revokeTokenByHash(this.catalog, hashToken(token), new Date());
  }

  /** The user a token belongs to; 401 when missing, unknown or revoked. */
  async authenticate(token: unknown): Promise<User> {
    return (await this.authenticateToken(token)).user;
  }

  /** The user a token belongs to and the token's id (not a secret: what a grant remembers it by). */
  async authenticateToken(token: unknown): Promise<{ user: User; tokenId: string }> {
    if (typeof token !== 'string' || token.length === 0) throw unauthorized();
    const digest = hashToken(token);
    const row = await tokenByHash(this.catalog, digest);
    // The lookup is by hash; the constant-time compare guards against any shortcut in it.
    if (!row || row.revokedAt || !sameDigest(row.hash, digest)) throw unauthorized('the token is unknown or revoked');
    return { user: row.user, tokenId: row.id };
  }

  /** Whether the token with this id exists and is not revoked (a signed upload URL outlives no token). */
  isTokenLive(tokenId: string): Promise<boolean> {
    return tokenIsLive(this.catalog, tokenId);
  }

  getUser(userId: string): Promise<User | undefined> {
    return userById(this.catalog, userId);
  }

  async requireUser(userId: string): Promise<User> {
    const u = await this.getUser(userId);
    if (!u) throw notFound(`user ${JSON.stringify(userId)} does not exist`);
    return u;
  }

  userCount(): Promise<number> {
    return userCount(this.catalog);
  }

  async addCredits(userId: string, amount: number): Promise<User> {
    if (!Number.isSafeInteger(amount) || amount === 0) throw badRequest('amount must be a non-zero whole number');
    const after = await addToBalance(this.catalog, userId, amount, 'credits add', new Date());
    if (after === undefined) throw notFound(`user ${JSON.stringify(userId)} does not exist`);
    if (after === 'negative') {
      const u = await this.getUser(userId);
      throw badRequest(`the balance would become negative (${u?.credits ?? 0} + ${amount})`);
    }
    return after; // unlimited stays unlimited
  }

  /**
   * Takes `cost` credits if the balance allows it: check and debit are one conditional UPDATE,
   * so concurrent requests can never overspend. Unlimited users (NULL) always pass.
   */
  async charge(userId: string, cost: number, reason: string): Promise<boolean> {
    if (cost === 0) return true;
    return chargeBalance(this.catalog, userId, cost, reason, new Date());
  }

  /** Gives back a charge whose work failed (a failed question is not charged). */
  async refund(userId: string, cost: number, reason: string): Promise<void> {
    if (cost === 0) return;
    await refundBalance(this.catalog, userId, cost, reason, new Date());
  }
}

/** A new token (shown once) and the row that keeps its hash. */
function tokenFor(userId: string): { token: string; row: TokenRow } {
  const token = newToken();
  return {
    token,
    row: { id: `t_${randomId(16)}`, userId, hash: hashToken(token), prefix: token.slice(0, 6), createdAt: new Date() },
  };
}
