// The operator's view of the nodes (`remote-browser-kit nodes list|drain|remove`): each node's
// state, whether it heart-beats, its load against its capacity; drain and remove.
import type { EngineConfig } from '../config.js';
import type { Store } from '../store/store.js';
import { nodeGoneMoves } from '../sessions/lifecycle.js';

export interface NodeView {
  id: string;
  state: string;
  /** Whether its last heartbeat is recent (a stopped node stays in the list until removed). */
  alive: boolean;
  /** Sessions it holds awake (starting, or running and not in standby): what its capacity counts. */
  load: number;
  /** Its running sessions in standby (issue 46): they do not fill its capacity. */
  standby: number;
  capacity: number | null;
  browsers: string[];
  internalUrl: string;
  advertisedUrl: string;
  heartbeat: string;
}

export async function listNodes(store: Store, config: EngineConfig, now = Date.now()): Promise<NodeView[]> {
  return (await store.nodes()).map((node) => ({
    id: node.id,
    state: node.state,
    alive: node.state !== 'lost' && now - node.heartbeat_at < config.cluster.lostAfterMs,
    load: node.load,
    standby: node.standby ?? 0,
    capacity: node.capacity,
    browsers: JSON.parse(node.browsers) as string[],
    internalUrl: node.internal_url,
    advertisedUrl: node.advertised_url,
    heartbeat: new Date(node.heartbeat_at).toISOString(),
  }));
}

/** Stops placement on a node; its sessions run to their end (the sweep still ends them on time). */
export async function drainNode(store: Store, id: string): Promise<{ id: string; load: number }> {
  const node = (await store.nodes()).find((n) => n.id === id);
  if (!node) throw new Error(`unknown node "${id}"; remote-browser-kit nodes list shows them`);
  if (node.state === 'lost') throw new Error(`node "${id}" is lost (silent); remove it instead`);
  await store.setNodeState(id, 'draining');
  return { id, load: node.load };
}

/**
 * Forgets a node that no longer runs; what it left in the store ends (decisions.md 1). A node that
 * still heart-beats is refused: drain it and stop its engine first.
 */
export async function removeNode(
  store: Store,
  config: EngineConfig,
  id: string,
  now = Date.now(),
  /** What follows the sessions ended (their webhook events), after the removal is written. */
  after?: (moved: Array<{ id: string; status: string }>) => Promise<void>,
): Promise<{ id: string; ended: number }> {
  const removed = await store.atomically(async (tx) => {
    const node = await tx.node(id);
    if (!node) throw new Error(`unknown node "${id}"; remote-browser-kit nodes list shows them`);
    if (node.state !== 'lost' && now - node.heartbeat_at < config.cluster.lostAfterMs) {
      throw new Error(`node "${id}" is running; drain it (nodes drain ${id}), stop its engine, then remove it`);
    }
    const ended = await tx.endSessionsOfNode(id, nodeGoneMoves(now, { running: 'the node that ran the session was removed', starting: 'the node that started the session was removed' }));
    await tx.removeNode(id);
    return { id, ended };
  });
  await after?.(removed.ended);
  return { id, ended: removed.ended.length };
}
