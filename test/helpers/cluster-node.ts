// Test helper: one engine node of a cluster in this process, on a throwaway Postgres database
// (testDatabase() in postgres.ts), with a fresh data directory, quick heartbeats, loopback egress,
// no warm pool and no log; `config` adds to that. Nodes are started one after another: the first
// makes the schema, the others find it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EngineConfigInput } from '../../src/engine/config.js';
import { createEngine, type Engine } from '../../src/engine/engine.js';

export interface ClusterNode {
  engine: Engine;
  /** Closes the engine (if not closed yet) and removes its data directory. */
  close(): Promise<void>;
}

export async function startClusterNode(options: { database: string; id: string; secret: string; config?: EngineConfigInput }): Promise<ClusterNode> {
  const dir = await mkdtemp(join(tmpdir(), `rbk-cluster-${options.id}-`));
  const engine = await createEngine({
    dataDir: dir,
    port: 0,
    config: {
      database: options.database,
      node: { id: options.id },
      cluster: { secret: options.secret, heartbeatMs: 500, lostAfterMs: 3000 },
      egress: { allow: ['127.0.0.0/8'] },
      log: { level: 'silent', pretty: false },
      warm: { memoryMb: 0, displays: 0 },
      standby: { afterSeconds: false },
      ...options.config,
    },
  });
  let closed = false;
  return {
    engine,
    async close() {
      if (!closed) await engine.close().catch(() => undefined);
      closed = true;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
