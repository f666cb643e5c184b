// Test helper: a session row written straight into an engine's store (no browser is started), in
// any status and with any field a tampered store could hold, and the share link that reaches it.
import type { Engine } from '../../src/engine/engine.js';
import type { EngineRuntime } from '../../src/engine/sessions/node-runtime.js';
import { shareLinkHash, shareLinkId } from '../../src/engine/sessions/share-links.js';
import type { SessionRow } from '../../src/engine/store/store.js';

let counter = 0;

/** Inserts a session of `owner`'s first subscription with `fields`; answers its share link (`/<share_language>/s?<id>`). */
export async function insertLinkedSession(engine: Engine<EngineRuntime>, owner: { accountId: string; subscriptionId: string }, fields: Partial<SessionRow> & { status: string }): Promise<string> {
  const secret = (await engine.store.setting('share_link_secret'))!;
  const id = `${fields.status}${String(++counter).padStart(4, '0')}`.padEnd(32, '0');
  const row: SessionRow = {
    id, account_id: owner.accountId, subscription_id: owner.subscriptionId, browser: 'chromium', browser_name: 'Chromium', url: null,
    language: 'en', layout: 'us', country: null, exit_city: null, egress: null, share_language: 'en', callback_url: null,
    link_hash: shareLinkHash(shareLinkId(secret, id)), view_link_hash: null, viewers: 0, counted: true, ever_ran: fields.status === 'running', created_at: Date.now(),
    running_at: null, ended_at: null, last_viewer_at: null, egress_bytes: 0, residential_bytes: 0, runtime_id: null, end_reason: null,
    location_applied: null, location_reason: null, node_id: null, recorded: false,
    ...fields,
  };
  await engine.store.insertSession(row);
  return `${engine.url}/${row.share_language}/s?${shareLinkId(secret, id)}`;
}
