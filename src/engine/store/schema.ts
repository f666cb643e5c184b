// The embedded SQLite database's schema as ordered migrations (Postgres has its own, with its own
// types, in postgres-schema.ts; the queries in store.ts serve both).
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     contact TEXT NOT NULL,
     language TEXT,
     layout TEXT,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE subscriptions (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     plan_id TEXT NOT NULL,
     cycle_anchor TEXT NOT NULL,
     position INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     ended_at INTEGER
   );
   CREATE INDEX subscriptions_account ON subscriptions(account_id, position);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     key_hash TEXT NOT NULL UNIQUE,
     prefix TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     revoked_at INTEGER
   );
   CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
     status TEXT NOT NULL,
     browser TEXT NOT NULL,
     browser_name TEXT NOT NULL,
     url TEXT,
     language TEXT NOT NULL,
     layout TEXT NOT NULL,
     country TEXT,
     exit_city TEXT,
     egress TEXT,
     share_language TEXT NOT NULL,
     callback_url TEXT,
     link_hash TEXT NOT NULL UNIQUE,
     counted INTEGER NOT NULL DEFAULT 1,
     ever_ran INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     running_at INTEGER,
     ended_at INTEGER,
     last_viewer_at INTEGER,
     egress_bytes INTEGER NOT NULL DEFAULT 0,
     residential_bytes INTEGER NOT NULL DEFAULT 0,
     runtime_id TEXT,
     end_reason TEXT,
     location_applied INTEGER,
     location_reason TEXT
   );
   CREATE INDEX sessions_account_created ON sessions(account_id, created_at);
   CREATE INDEX sessions_subscription_created ON sessions(subscription_id, created_at);
   CREATE INDEX sessions_status ON sessions(status);
   CREATE TABLE idempotency (
     account_id TEXT NOT NULL,
     key TEXT NOT NULL,
     request_hash TEXT NOT NULL,
     response TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (account_id, key)
   );
   CREATE TABLE engine_settings (
     name TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );`,
  // v6 (deprecated interface): short URLs and the session keys getKey hands out. A token is kept
  // as a hash, like an API key; `session_id` is the session its client launched last through /b.
  `CREATE TABLE short_urls (
     id TEXT PRIMARY KEY,
     url TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE INDEX short_urls_created ON short_urls(created_at);
   CREATE TABLE v6_tokens (
     token_hash TEXT PRIMARY KEY,
     key_id TEXT NOT NULL REFERENCES api_keys(id),
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     session_id TEXT
   );
   CREATE INDEX v6_tokens_expires ON v6_tokens(expires_at);`,
  // Nodes (a cluster of engines on one Postgres; one node on SQLite): who runs which session.
  // `browsers` is a JSON array of the browser ids the node can start; `capacity` NULL = no limit;
  // `state` is active, draining (runs its sessions to their end, takes no new one) or lost.
  `ALTER TABLE sessions ADD COLUMN node_id TEXT;
   CREATE INDEX sessions_node_status ON sessions(node_id, status);
   CREATE TABLE nodes (
     id TEXT PRIMARY KEY,
     internal_url TEXT NOT NULL,
     advertised_url TEXT NOT NULL,
     capacity INTEGER,
     browsers TEXT NOT NULL,
     state TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     heartbeat_at INTEGER NOT NULL
   );`,
  // View-only links (decisions.md 45): the hash of a session's second link, which lets its holder
  // watch but not control; and how many viewers the node that runs it has connected.
  `ALTER TABLE sessions ADD COLUMN view_link_hash TEXT;
   CREATE UNIQUE INDEX sessions_view_link ON sessions(view_link_hash);
   ALTER TABLE sessions ADD COLUMN viewers INTEGER NOT NULL DEFAULT 0;`,
  // Session webhooks (decisions.md 61): one receiver per account with its signing secret, and the
  // events waiting to be delivered. A node claims a delivery (claimed_by/claimed_until) under the
  // store's webhooks lock, so one node sends each event; the id is the event's, so the same event
  // is never queued twice.
  `CREATE TABLE webhooks (
     account_id TEXT PRIMARY KEY REFERENCES accounts(id),
     url TEXT NOT NULL,
     secret TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE webhook_deliveries (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL,
     type TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER NOT NULL,
     claimed_by TEXT,
     claimed_until INTEGER,
     delivered_at INTEGER,
     failed_at INTEGER,
     last_error TEXT
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;
   CREATE INDEX webhook_deliveries_account ON webhook_deliveries(account_id);`,
  // The warm browsers each node has ready (decisions.md 64): a JSON array of "browser language"
  // kinds, written with every heartbeat, so that placement can prefer a node with a fitting one.
  `ALTER TABLE nodes ADD COLUMN warm TEXT NOT NULL DEFAULT '[]';`,
  // Whether a session is recorded (issue 35, decisions.md 96).
  `ALTER TABLE sessions ADD COLUMN recorded INTEGER NOT NULL DEFAULT 0;`,
  // Saved profiles (decisions.md 85-89): an account's named browser state, for one browser family.
  // `version_id` names the current saved state in profile_versions (NULL until a session saved
  // one); a save inserts the new version and points the profile at it in one transaction, so a
  // crash keeps the earlier one. `session_id` is the one session that runs on it now (set by the
  // create transaction only when free: decisions.md 86). A session records its profile.
  `CREATE TABLE profiles (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     name TEXT NOT NULL,
     browser TEXT NOT NULL,
     family TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     used_at INTEGER NOT NULL,
     bytes INTEGER NOT NULL DEFAULT 0,
     stored_bytes INTEGER NOT NULL DEFAULT 0,
     version_id TEXT,
     session_id TEXT,
     save_error TEXT
   );
   CREATE INDEX profiles_account ON profiles(account_id, created_at);
   CREATE INDEX profiles_used ON profiles(used_at);
   CREATE TABLE profile_versions (
     id TEXT PRIMARY KEY,
     profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
     created_at INTEGER NOT NULL,
     bytes INTEGER NOT NULL,
     data BLOB NOT NULL
   );
   CREATE INDEX profile_versions_profile ON profile_versions(profile_id);
   ALTER TABLE sessions ADD COLUMN profile_id TEXT;
   ALTER TABLE sessions ADD COLUMN profile_save INTEGER;
   ALTER TABLE sessions ADD COLUMN profile_tabs INTEGER;`,
  // Whether a session's browser runs as an app window: kiosk mode, its tabs in the viewer's strip (issue 36, decisions.md 104).
  `ALTER TABLE sessions ADD COLUMN app_window INTEGER NOT NULL DEFAULT 0;`,
  // One driver at a time or everyone (issue 36, decisions.md 99), and who drives now (JSON, written
  // by the node that runs the session, so any node's share state tells it).
  `ALTER TABLE sessions ADD COLUMN control_mode TEXT NOT NULL DEFAULT 'shared';
   ALTER TABLE sessions ADD COLUMN driver TEXT;`,
  // A saved profile's version in sealed chunks (decisions.md 138): written as the save streams,
  // before its version row, which then holds only the format byte and the chunks' count (a
  // version of an earlier engine keeps its whole blob in `data` and 0 chunks, and still opens).
  // `profile_id` lets a failed or cut-off save's chunks go with the profile's next save or removal.
  `ALTER TABLE profile_versions ADD COLUMN chunks INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE profile_chunks (
     version_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
     data BLOB NOT NULL,
     PRIMARY KEY (version_id, seq)
   );
   CREATE INDEX profile_chunks_profile ON profile_chunks(profile_id);`,
  // Why a recorded session's recording stopped while the session ran on (a plan's cap, the node's
  // free-space floor: decisions.md 131-132); NULL while it records. Written by the node that records it,
  // so any node's share state drops `recording`.
  `ALTER TABLE sessions ADD COLUMN recording_stopped TEXT;`,
  // The origins that may frame an account's share links (issue 44, decisions.md 134), a JSON array
  // (NULL: none), and a session's narrower list (NULL: the account's applies).
  `ALTER TABLE accounts ADD COLUMN embed_origins TEXT;
   ALTER TABLE sessions ADD COLUMN embed_origins TEXT;`,
  // Standby (issue 46, decisions.md 141): whether the node that runs a session has frozen it now,
  // and how many times it was woken.
  `ALTER TABLE sessions ADD COLUMN standby INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE sessions ADD COLUMN wakes INTEGER NOT NULL DEFAULT 0;`,
  // Whether programs may drive a Firefox ESR session (\`automation: true\`): its remote agent runs (issue 45, decisions.md 143).
  `ALTER TABLE sessions ADD COLUMN automation INTEGER NOT NULL DEFAULT 0;`,
  // Hibernation (issue 46, decisions.md 165): a running session whose processes ended, its state
  // sealed in hibernation_chunks (the profile archive's chunks, bound to the session and the
  // state's id), its open tabs as JSON; no node holds it (node_id NULL) until one resumes it.
  `ALTER TABLE sessions ADD COLUMN hibernated INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE sessions ADD COLUMN hibernation_state TEXT;
   ALTER TABLE sessions ADD COLUMN hibernation_chunks INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE sessions ADD COLUMN hibernation_tabs TEXT;
   CREATE TABLE hibernation_chunks (
     state_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     session_id TEXT NOT NULL,
     data BLOB NOT NULL,
     PRIMARY KEY (state_id, seq)
   );
   CREATE INDEX hibernation_chunks_session ON hibernation_chunks(session_id);`,
];
