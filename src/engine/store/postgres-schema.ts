// The Postgres schema as ordered migrations: the same tables, columns and indexes as every SQLite
// migration in schema.ts together, with Postgres types (BIGINT epoch-ms times and byte counts,
// BOOLEAN flags). A later change to the SQLite schema gets its own migration here too.
export const POSTGRES_MIGRATIONS: readonly string[] = [
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     contact TEXT NOT NULL,
     language TEXT,
     layout TEXT,
     created_at BIGINT NOT NULL
   );
   CREATE TABLE subscriptions (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     plan_id TEXT NOT NULL,
     cycle_anchor TEXT NOT NULL,
     position INTEGER NOT NULL,
     created_at BIGINT NOT NULL,
     ended_at BIGINT
   );
   CREATE INDEX subscriptions_account ON subscriptions(account_id, position);
   CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL REFERENCES accounts(id),
     key_hash TEXT NOT NULL UNIQUE,
     prefix TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     revoked_at BIGINT
   );
   -- seq orders sessions created in the same millisecond, as rowid does in SQLite.
   CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     seq BIGINT GENERATED ALWAYS AS IDENTITY,
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
     counted BOOLEAN NOT NULL DEFAULT TRUE,
     ever_ran BOOLEAN NOT NULL DEFAULT FALSE,
     created_at BIGINT NOT NULL,
     running_at BIGINT,
     ended_at BIGINT,
     last_viewer_at BIGINT,
     egress_bytes BIGINT NOT NULL DEFAULT 0,
     residential_bytes BIGINT NOT NULL DEFAULT 0,
     runtime_id TEXT,
     end_reason TEXT,
     location_applied BOOLEAN,
     location_reason TEXT,
     node_id TEXT
   );
   CREATE INDEX sessions_account_created ON sessions(account_id, created_at);
   CREATE INDEX sessions_subscription_created ON sessions(subscription_id, created_at);
   CREATE INDEX sessions_status ON sessions(status);
   CREATE INDEX sessions_node_status ON sessions(node_id, status);
   CREATE TABLE idempotency (
     account_id TEXT NOT NULL,
     key TEXT NOT NULL,
     request_hash TEXT NOT NULL,
     response TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     PRIMARY KEY (account_id, key)
   );
   CREATE TABLE engine_settings (
     name TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );
   -- v6 (deprecated interface): short URLs and the session keys getKey hands out.
   CREATE TABLE short_urls (
     id TEXT PRIMARY KEY,
     url TEXT NOT NULL,
     created_at BIGINT NOT NULL
   );
   CREATE INDEX short_urls_created ON short_urls(created_at);
   CREATE TABLE v6_tokens (
     token_hash TEXT PRIMARY KEY,
     key_id TEXT NOT NULL REFERENCES api_keys(id),
     created_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL,
     session_id TEXT
   );
   CREATE INDEX v6_tokens_expires ON v6_tokens(expires_at);
   -- Nodes of the cluster: browsers is a JSON array of browser ids, capacity NULL = no limit,
   -- state is active, draining or lost.
   CREATE TABLE nodes (
     id TEXT PRIMARY KEY,
     internal_url TEXT NOT NULL,
     advertised_url TEXT NOT NULL,
     capacity INTEGER,
     browsers TEXT NOT NULL,
     state TEXT NOT NULL,
     started_at BIGINT NOT NULL,
     heartbeat_at BIGINT NOT NULL
   );`,
  // The rate limits every node shares (http/limits.ts): rate-limiter-flexible's own table, made
  // here once (under the migrations' lock) rather than by each limiter at start, where several
  // limiters of several nodes creating it at once collide.
  `CREATE TABLE IF NOT EXISTS rate_limits (
     key VARCHAR(255) PRIMARY KEY,
     points INTEGER NOT NULL DEFAULT 0,
     expire BIGINT
   );`,
  // View-only links and the viewer count (schema.ts, the same migration).
  `ALTER TABLE sessions ADD COLUMN view_link_hash TEXT;
   CREATE UNIQUE INDEX sessions_view_link ON sessions(view_link_hash);
   ALTER TABLE sessions ADD COLUMN viewers INTEGER NOT NULL DEFAULT 0;`,
  // Session webhooks and their delivery queue (schema.ts, the same migration).
  `CREATE TABLE webhooks (
     account_id TEXT PRIMARY KEY REFERENCES accounts(id),
     url TEXT NOT NULL,
     secret TEXT NOT NULL,
     created_at BIGINT NOT NULL
   );
   CREATE TABLE webhook_deliveries (
     id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL,
     type TEXT NOT NULL,
     body TEXT NOT NULL,
     created_at BIGINT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at BIGINT NOT NULL,
     claimed_by TEXT,
     claimed_until BIGINT,
     delivered_at BIGINT,
     failed_at BIGINT,
     last_error TEXT
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL;
   CREATE INDEX webhook_deliveries_account ON webhook_deliveries(account_id);`,
  // The warm browsers each node has ready (schema.ts, the same migration).
  `ALTER TABLE nodes ADD COLUMN warm TEXT NOT NULL DEFAULT '[]';`,
  // Whether a session is recorded (schema.ts, the same migration).
  `ALTER TABLE sessions ADD COLUMN recorded BOOLEAN NOT NULL DEFAULT FALSE;`,
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
     created_at BIGINT NOT NULL,
     used_at BIGINT NOT NULL,
     bytes BIGINT NOT NULL DEFAULT 0,
     stored_bytes BIGINT NOT NULL DEFAULT 0,
     version_id TEXT,
     session_id TEXT,
     save_error TEXT
   );
   CREATE INDEX profiles_account ON profiles(account_id, created_at);
   CREATE INDEX profiles_used ON profiles(used_at);
   CREATE TABLE profile_versions (
     id TEXT PRIMARY KEY,
     profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
     created_at BIGINT NOT NULL,
     bytes BIGINT NOT NULL,
     data BYTEA NOT NULL
   );
   CREATE INDEX profile_versions_profile ON profile_versions(profile_id);
   ALTER TABLE sessions ADD COLUMN profile_id TEXT;
   ALTER TABLE sessions ADD COLUMN profile_save BOOLEAN;
   ALTER TABLE sessions ADD COLUMN profile_tabs BOOLEAN;`,
  // Whether a session's browser runs as an app window (schema.ts, the same migration).
  `ALTER TABLE sessions ADD COLUMN app_window BOOLEAN NOT NULL DEFAULT FALSE;`,
  // One driver at a time or everyone, and who drives now (schema.ts, the same migration).
  `ALTER TABLE sessions ADD COLUMN control_mode TEXT NOT NULL DEFAULT 'shared';
   ALTER TABLE sessions ADD COLUMN driver TEXT;`,
  // A saved profile's version in sealed chunks (schema.ts, the same migration).
  `ALTER TABLE profile_versions ADD COLUMN chunks INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE profile_chunks (
     version_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     profile_id TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
     data BYTEA NOT NULL,
     PRIMARY KEY (version_id, seq)
   );
   CREATE INDEX profile_chunks_profile ON profile_chunks(profile_id);`,
  // Why a recording stopped while its session ran on (schema.ts, the same migration).
  `ALTER TABLE sessions ADD COLUMN recording_stopped TEXT;`,
  // The origins that may frame an account's share links, and a session's narrower list (schema.ts, the same migration).
  `ALTER TABLE accounts ADD COLUMN embed_origins TEXT;
   ALTER TABLE sessions ADD COLUMN embed_origins TEXT;`,
  // Standby: whether a session is frozen now, and how many times it was woken (schema.ts, the same migration).
  `ALTER TABLE sessions ADD COLUMN standby BOOLEAN NOT NULL DEFAULT FALSE;
   ALTER TABLE sessions ADD COLUMN wakes INTEGER NOT NULL DEFAULT 0;`,
  // Whether programs may drive a Firefox ESR session (schema.ts, the same migration).
  `ALTER TABLE sessions ADD COLUMN automation BOOLEAN NOT NULL DEFAULT FALSE;`,
  // Hibernation: the session's sealed state and open tabs while no node holds it (schema.ts, the same migration).
  `ALTER TABLE sessions ADD COLUMN hibernated BOOLEAN NOT NULL DEFAULT FALSE;
   ALTER TABLE sessions ADD COLUMN hibernation_state TEXT;
   ALTER TABLE sessions ADD COLUMN hibernation_chunks INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE sessions ADD COLUMN hibernation_tabs TEXT;
   CREATE TABLE hibernation_chunks (
     state_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     session_id TEXT NOT NULL,
     data BYTEA NOT NULL,
     PRIMARY KEY (state_id, seq)
   );
   CREATE INDEX hibernation_chunks_session ON hibernation_chunks(session_id);`,
];
