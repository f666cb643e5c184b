// Accounts, their subscriptions (pools) and API keys. Keys are random, shown once when made,
// stored only as a SHA-256 hash (they carry 256 random bits, so a fast hash is enough), revocable.
import { createHash, randomBytes } from 'node:crypto';
import { isBrowserLanguage, isKeyboardLayout } from '../../protocol/index.js';
import type { EngineConfig, Plan } from '../config.js';
import type { AccountRow, ApiKeyRow, Store, SubscriptionRow } from '../store/store.js';
import { formatDay, parseDay } from '../../protocol/cycle.js';

const KEY_PREFIX = 'rbk_';

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function newId(prefix: string, bytes = 8): string {
  return `${prefix}${randomBytes(bytes).toString('hex')}`;
}

function newKey(accountId: string, now: number): { row: ApiKeyRow; key: string } {
  const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, row: { id: newId('key_'), account_id: accountId, key_hash: hashSecret(key), prefix: key.slice(0, 10), created_at: now, revoked_at: null } };
}

/** An account as a key presents it: with the plans of its current subscriptions, read with it. */
export type AuthenticatedAccount = AccountRow & { plan_ids: string[] };

export interface NewAccount {
  contact: string;
  plans: string[];
  cycleStart?: string;
  language?: string;
  layout?: string;
}

export interface AccountView {
  id: string;
  contact: string;
  language: string | null;
  layout: string | null;
  subscriptions: Array<{ id: string; plan_id: string; cycle_start: string }>;
}

export class Accounts {
  constructor(
    private readonly store: Store,
    private readonly config: EngineConfig,
    private readonly now: () => number,
  ) {}

  plans(): Plan[] {
    return this.config.plans;
  }

  plan(id: string): Plan | undefined {
    return this.config.plans.find((plan) => plan.id === id);
  }

  async create(input: NewAccount): Promise<{ account: AccountView; apiKey: { id: string; key: string } }> {
    if (!/^[^\s@]+@[^\s@]+$/.test(input.contact) || input.contact.length > 320) throw new Error(`contact "${input.contact}" is not an e-mail address`);
    if (input.plans.length === 0) throw new Error('an account needs at least one plan (--plan)');
    for (const id of input.plans) {
      if (!this.plan(id)) throw new Error(`unknown plan "${id}"; plans: ${this.config.plans.map((p) => p.id).join(', ')}`);
    }
    if (input.language !== undefined && !isBrowserLanguage(input.language)) throw new Error(`unknown browser language "${input.language}"`);
    if (input.layout !== undefined && !isKeyboardLayout(input.layout)) throw new Error(`unknown keyboard layout "${input.layout}"`);
    const now = this.now();
    const anchor = input.cycleStart ? formatDay(parseDay(input.cycleStart)) : formatDay(new Date(now));
    const account: AccountRow = { id: newId('acc_'), contact: input.contact, language: input.language ?? null, layout: input.layout ?? null, created_at: now };
    const subscriptions: SubscriptionRow[] = input.plans.map((plan_id, position) => ({
      id: newId('sub_'),
      account_id: account.id,
      plan_id,
      cycle_anchor: anchor,
      position,
      created_at: now,
      ended_at: null,
    }));
    const { row, key } = newKey(account.id, now);
    await this.store.insertAccount(account, subscriptions, row);
    return { account: await this.view(account), apiKey: { id: row.id, key } };
  }

  async view(account: AccountRow): Promise<AccountView> {
    return {
      id: account.id,
      contact: account.contact,
      language: account.language,
      layout: account.layout,
      subscriptions: (await this.store.subscriptions(account.id)).map((s) => ({ id: s.id, plan_id: s.plan_id, cycle_start: s.cycle_anchor })),
    };
  }

  async list(): Promise<AccountView[]> {
    return Promise.all((await this.store.accounts()).map((account) => this.view(account)));
  }

  async createKey(accountId: string): Promise<{ id: string; key: string; account_id: string }> {
    if (!(await this.store.account(accountId))) throw new Error(`unknown account "${accountId}"`);
    const { row, key } = newKey(accountId, this.now());
    await this.store.insertKey(row);
    return { id: row.id, key, account_id: accountId };
  }

  async listKeys(accountId: string): Promise<Array<{ id: string; prefix: string; created: string; revoked: boolean }>> {
    if (!(await this.store.account(accountId))) throw new Error(`unknown account "${accountId}"`);
    return (await this.store.keys(accountId)).map((k) => ({ id: k.id, prefix: k.prefix, created: new Date(k.created_at).toISOString(), revoked: k.revoked_at !== null }));
  }

  async revokeKey(id: string): Promise<{ id: string; revoked: true }> {
    if (!(await this.store.revokeKey(id, this.now()))) throw new Error(`unknown key "${id}"`);
    return { id, revoked: true };
  }

  /** The account behind a presented key, or null when it is unknown or revoked. */
  authenticate(key: string): Promise<AuthenticatedAccount | null> {
    return this.authenticateHash(key, hashSecret(key));
  }

  /** As authenticate(), for callers that already hashed the key. */
  async authenticateHash(key: string, keyHash: string): Promise<AuthenticatedAccount | null> {
    if (!key.startsWith(KEY_PREFIX) || key.length > 200) return null;
    const row = await this.store.accountByKeyHash(keyHash);
    if (!row || row.revoked_at !== null) return null;
    const { revoked_at: _revoked, ...account } = row;
    return account;
  }
}
