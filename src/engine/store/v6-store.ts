// The deprecated v6 interface's state in the store (http/v6.ts, decisions.md 23, 164): its short
// URLs and its two-hour session keys, in their own tables (short_urls, v6_tokens) that only v6
// reads and writes. Beside store.ts as the webhooks' and profiles' stores are: no transaction
// needs them together with another table (the sweeper's clean-up only runs in its transaction),
// so a change of the core schema is still read in store.ts. The one join, a session key's account,
// reads the same account columns as store.ts accountByKeyHash. Queries run where the store given
// runs them: inside atomically(), in its transaction.
import type { AccountRow } from './rows.js';
import type { Store } from './store.js';

export class V6Store {
  constructor(private readonly store: Pick<Store, 'sql'>) {}

  // Short URLs ---------------------------------------------------------------------------------

  /** Stores a short URL; false when the id is taken (the caller draws another). */
  async insertShortUrl(id: string, url: string, now: number): Promise<boolean> {
    return (await this.store.sql.run('INSERT INTO short_urls (id, url, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING', [id, url, now])) > 0;
  }

  /** The address behind a short-URL id made at or after `sinceMs`. */
  async shortUrl(id: string, sinceMs: number): Promise<string | undefined> {
    return (await this.store.sql.get<{ url: string }>('SELECT url FROM short_urls WHERE id = ? AND created_at >= ?', [id, sinceMs]))?.url;
  }

  // Session keys -------------------------------------------------------------------------------

  async insertToken(tokenHash: string, keyId: string, now: number, expiresAt: number): Promise<void> {
    await this.store.sql.run('INSERT INTO v6_tokens (token_hash, key_id, created_at, expires_at) VALUES (?, ?, ?, ?)', [tokenHash, keyId, now, expiresAt]);
  }

  /**
   * The account behind a v6 session key that has not expired and whose API key is not revoked,
   * with the session its client launched last and the hash of the API key it was made from.
   */
  accountByToken(tokenHash: string, now: number): Promise<(AccountRow & { session_id: string | null; key_hash: string }) | undefined> {
    return this.store.sql.get(
      `SELECT a.id, a.contact, a.language, a.layout, a.created_at, t.session_id, k.key_hash
       FROM v6_tokens t JOIN api_keys k ON k.id = t.key_id JOIN accounts a ON a.id = k.account_id
       WHERE t.token_hash = ? AND t.expires_at > ? AND k.revoked_at IS NULL`,
      [tokenHash, now],
    );
  }

  async setTokenSession(tokenHash: string, sessionId: string): Promise<void> {
    await this.store.sql.run('UPDATE v6_tokens SET session_id = ? WHERE token_hash = ?', [sessionId, tokenHash]);
  }

  /** Forgets short URLs made before `shortUrlCutoffMs` and session keys expired before `now`. */
  async forgetBefore(shortUrlCutoffMs: number, now: number): Promise<void> {
    await this.store.sql.run('DELETE FROM short_urls WHERE created_at < ?', [shortUrlCutoffMs]);
    await this.store.sql.run('DELETE FROM v6_tokens WHERE expires_at <= ?', [now]);
  }
}
