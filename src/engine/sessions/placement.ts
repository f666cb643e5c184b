// Which node a new session runs on (decided inside the create transaction, with the quota): on
// one machine this node, unless it drains or is full; in a cluster the least loaded node that is
// alive, takes new sessions and can start the browser, a node with room left to wake one of its
// sessions in standby first, then one with a warm browser of the session's kind (decisions.md 64,
// 159). A node's load is what it holds awake: sessions in standby do not fill it (issue 46). Reads the store through two queries only, so it is tested with plain rows.
import type { NodeRow, NodeWithLoad } from '../store/store.js';

/** What placement reads of the store (a transaction's). */
export interface PlacementStore {
  node(id: string): Promise<NodeRow | undefined>;
  nodes(): Promise<NodeWithLoad[]>;
}

export interface PlacementRequest {
  /** The image id the session starts. */
  browser: string;
  /** The session's language: a node with a warm browser of this browser and language is preferred. */
  language?: string;
  /** This node: the one there is on one machine. */
  nodeId: string;
  /** This node's own capacity setting (one machine); null = no limit. */
  capacity: number | null;
  /** In a cluster: whether a node counts as alive (its heartbeat is recent). Absent on one machine. */
  alive?: (node: NodeWithLoad) => boolean;
}

/** The node a new session goes to, or null when none has room. */
export async function placeSession(store: PlacementStore, request: PlacementRequest): Promise<string | null> {
  const { alive, nodeId, capacity } = request;
  if (!alive) {
    // One machine: this node, unless it drains, up to its capacity.
    if ((await store.node(nodeId))?.state === 'draining') return null;
    if (capacity === null) return nodeId;
    const here = (await store.nodes()).find((node) => node.id === nodeId);
    return (here?.load ?? 0) < capacity ? nodeId : null;
  }
  return leastLoaded(await store.nodes(), request.browser, alive, request.language)?.id ?? null;
}

/** Whether the node said, at its last heartbeat, that it has a warm `browser` for sessions in `language`. */
function hasWarm(node: NodeWithLoad, browser: string, language: string | undefined): boolean {
  if (language === undefined) return false;
  try {
    return (JSON.parse(node.warm ?? '[]') as string[]).includes(`${browser} ${language}`);
  } catch {
    return false;
  }
}

/**
 * Whether the node, given the new session, still has room to wake one of its sessions in standby
 * (always, when it has none in standby or no limit).
 */
function roomToWake(node: NodeWithLoad): boolean {
  return node.capacity === null || (node.standby ?? 0) === 0 || node.load + 2 <= node.capacity;
}

/**
 * The cluster's choice: a node with room to wake one of its sessions in standby, then one with a
 * warm browser of the session's kind, then the most free room for its capacity, then the fewest
 * sessions, then the id.
 */
export function leastLoaded(nodes: readonly NodeWithLoad[], browser: string, alive: (node: NodeWithLoad) => boolean, language?: string): NodeWithLoad | undefined {
  const room = (node: NodeWithLoad) => (node.capacity === null ? 1 : (node.capacity - node.load) / Math.max(node.capacity, 1));
  const candidates = nodes.filter(
    (node) =>
      node.state === 'active' &&
      alive(node) &&
      (node.capacity === null || node.load < node.capacity) &&
      (JSON.parse(node.browsers) as string[]).includes(browser),
  );
  const warm = (node: NodeWithLoad) => (hasWarm(node, browser, language) ? 1 : 0);
  const wakeRoom = (node: NodeWithLoad) => (roomToWake(node) ? 1 : 0);
  candidates.sort((a, b) => wakeRoom(b) - wakeRoom(a) || warm(b) - warm(a) || room(b) - room(a) || a.load - b.load || a.id.localeCompare(b.id));
  return candidates[0];
}
