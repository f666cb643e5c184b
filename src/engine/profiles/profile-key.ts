// The key saved profiles are encrypted under (decisions.md 88): the operator's (configuration
// `profiles.key`, or the environment's RBK_PROFILE_KEY), 32 bytes as base64 or hex; on SQLite
// without one, a key the engine makes at the first start in its data directory (mode 0600), so
// profiles work out of the box; on Postgres (a cluster) without one, none: every node must hold
// the same key, and a key made by one node would lock the others out.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PROFILE_KEY_ENV = 'RBK_PROFILE_KEY';
export const PROFILE_KEY_FILE = 'profile.key';

/** The key, or why there is none (the words profile calls answer with). */
export type ProfileKey = { key: Buffer } | { missing: string };

/** 32 bytes from base64 or hex text; throws naming `source` for anything else. */
export function parseProfileKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(trimmed) && key.toString('base64').replace(/=+$/, '') !== trimmed.replace(/=+$/, ''))) {
    throw new Error(`${source}: must be 32 random bytes as base64 (44 characters) or hex (64 characters); make one with \`openssl rand -base64 32\``);
  }
  return key;
}

/** Resolves the key: configured, from the environment, the data directory's own (SQLite), or missing (Postgres). */
export function resolveProfileKey(configured: string | null, dataDir: string, dialect: 'sqlite' | 'postgres', env: NodeJS.ProcessEnv = process.env): ProfileKey {
  if (configured) return { key: parseProfileKey(configured, 'profiles.key') };
  const fromEnv = env[PROFILE_KEY_ENV];
  if (fromEnv) return { key: parseProfileKey(fromEnv, PROFILE_KEY_ENV) };
  if (dialect === 'postgres') {
    return { missing: `saved profiles are off on this service: a cluster needs one profile key on every node (configuration profiles.key or ${PROFILE_KEY_ENV}); its operator must set it` };
  }
  const file = join(dataDir, PROFILE_KEY_FILE);
  try {
    return { key: parseProfileKey(readFileSync(file, 'utf8'), file) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const made = randomBytes(32).toString('base64');
  try {
    // 'wx': made afresh; another process that made it first wins, and its key is read.
    writeFileSync(file, `${made}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return { key: parseProfileKey(readFileSync(file, 'utf8'), file) };
}
