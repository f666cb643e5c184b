// Vitest globalSetup of the Node test projects: one throwaway Postgres cluster for the whole run;
// its address goes to the test files in RBK_TEST_POSTGRES (testDatabase() in postgres.ts makes a
// fresh database on it for each). Without Postgres installed the run goes on, and only the tests
// that need it fail, saying how to install it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { POSTGRES_BIN, startPostgres } from './postgres.js';

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.RBK_TEST_POSTGRES) return undefined;
  if (!existsSync(join(POSTGRES_BIN, 'initdb'))) {
    console.warn(`Postgres is not installed (${POSTGRES_BIN}); tests that need it will fail. Install it with: node scripts/setup.mjs --test`);
    return undefined;
  }
  const cluster = await startPostgres();
  process.env.RBK_TEST_POSTGRES = cluster.url('postgres');
  return async () => {
    delete process.env.RBK_TEST_POSTGRES;
    await cluster.stop();
  };
}
