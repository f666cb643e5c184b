// Which node owns a session: the one question the API (remove) and every channel (a viewer's RFB,
// later sound, files, automation) ask before they act here or forward to the owner. Answered in
// one place so that they can never disagree.
import type { SessionRow } from './store.js';

/** Where a session's browser lives: on this node, on another node, or nowhere (not starting or running). */
export type SessionOwner = { at: 'here' } | { at: 'node'; nodeId: string } | { at: 'none' };

/**
 * The owner of a session as the store has it. A starting or running session without a node (an
 * older SQLite file, before nodes) is this node's: there is only one.
 */
export function sessionOwner(row: Pick<SessionRow, 'status' | 'node_id'>, thisNode: string): SessionOwner {
  if (row.status !== 'starting' && row.status !== 'running') return { at: 'none' };
  if (row.node_id === null || row.node_id === thisNode) return { at: 'here' };
  return { at: 'node', nodeId: row.node_id };
}
