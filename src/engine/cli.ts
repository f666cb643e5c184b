// The `remote-browser-kit` command line for operators: serve, plans, accounts, keys, webhooks, nodes, doctor.
// Every command has --json output for scripts; errors exit 1 with a message that says what to do.
import { readFileSync, statSync } from 'node:fs';
import { Command } from 'commander';
import { loadEngineConfig, type EngineConfig } from './config.js';
import { drainNode, listNodes, removeNode } from './cluster/nodes.js';
import { formatDoctor, runDoctor } from './doctor.js';
import { startDemo } from '../demo/server.js';
import { createEngine } from './engine.js';
import { openDataDirectory } from './data-directory.js';
import { silentLogger } from './operations/logger.js';
import { surviveUnhandledRejections } from './operations/unhandled.js';
import { eventTypeOf } from './sessions/lifecycle.js';
import { SessionWebhooks } from './webhooks/webhooks.js';

interface Common {
  data: string;
  config?: string;
  database?: string;
  json?: boolean;
}

function print(options: { json?: boolean }, value: unknown, text: () => string): void {
  console.log(options.json ? JSON.stringify(value) : text());
}

/** Runs an operator command against the data directory, turning failures into a clear exit. */
async function withData<T>(options: Common, work: (open: Awaited<ReturnType<typeof openDataDirectory>>, config: EngineConfig) => T | Promise<T>, text: (value: T) => string): Promise<void> {
  try {
    const config = await loadEngineConfig(options.config);
    const opened = await openDataDirectory(options.data, config, Date.now, options.database ?? config.database);
    try {
      const value = await work(opened, config);
      print(options, value, () => text(value));
    } finally {
      await opened.store.close();
    }
  } catch (error) {
    const message = (error as Error).message;
    if (options.json) console.log(JSON.stringify({ error: message }));
    else console.error(`remote-browser-kit: ${message}`);
    process.exitCode = 1;
  }
}

const common = (command: Command) =>
  command
    .option('--data <dir>', 'data directory', '.data')
    .option('--config <file>', 'configuration file (JSON, see docs/operator-cli.md)')
    .option('--database <url>', 'a postgres:// URL that several nodes share (default: SQLite in the data directory)')
    .option('--json', 'print JSON');

export function buildCli(): Command {
  const program = new Command('remote-browser-kit').description('Remote browser sessions: the engine and its operator tools');

  common(program.command('serve').description('run the engine: clean what an earlier run left, then serve the HTTP interface'))
    .option('--port <port>', 'TCP port (0 picks a free one)', '8640')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .action(async (options: Common & { port: string; host: string }) => {
      try {
        const config = await loadEngineConfig(options.config);
        const clockFile = process.env.RBK_CLOCK_OFFSET_FILE;
        const engine = await createEngine({
          port: Number(options.port),
          host: options.host,
          dataDir: options.data,
          config,
          ...(options.database ? { database: options.database } : {}),
          ...(clockFile ? { now: offsetClock(clockFile) } : {}),
        });
        surviveUnhandledRejections(engine.logger);
        const facts = { url: engine.url, operatorUrl: engine.operatorUrl, node: engine.nodeId, database: engine.store.dialect, reaped: engine.reaped, recovered: engine.recovered, browsers: engine.runtime.images.filter((i) => i.enabled).map((i) => i.id), channels: engine.channels };
        print(options, facts, () =>
          [
            `remote-browser-kit engine listening on ${engine.url} (node ${engine.nodeId}, ${engine.store.dialect === 'postgres' ? 'Postgres: a node of a cluster' : 'SQLite in the data directory'})`,
            `  browsers: ${facts.browsers.join(', ') || 'none (run remote-browser-kit doctor)'}`,
            `  operator listener (/metrics, /readyz, /healthz): ${engine.operatorUrl ?? 'off (operator.metrics: false)'}`,
            `  cleaned from an earlier run: ${engine.reaped.directories} session directories, ${engine.reaped.processes} processes`,
            `  sessions ended by the restart: ${engine.recovered.suspended} suspended, ${engine.recovered.errored} failed to start`,
          ].join('\n'),
        );
        const stop = () => void engine.close().finally(() => process.exit(0));
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      } catch (error) {
        console.error(`remote-browser-kit: ${(error as Error).message}`);
        process.exit(1);
      }
    });

  program
    .command('demo')
    .description('run the demo: the engine, a development account and key, the proxy route and a page with the components')
    .option('--port <port>', 'port of the demo page (the engine takes the next one)', '8640')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--data <dir>', 'data directory', '.data')
    .action(async (options: { port: string; host: string; data: string }) => {
      try {
        const demo = await startDemo({ port: Number(options.port), host: options.host, dataDir: options.data });
        surviveUnhandledRejections(demo.engine.logger);
        const stop = () => void demo.close().finally(() => process.exit(0));
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      } catch (error) {
        console.error(`remote-browser-kit: ${(error as Error).message}`);
        process.exit(1);
      }
    });

  common(program.command('plans').description('list the plans accounts can subscribe to')).action((options: Common) =>
    withData(options, ({ accounts: a }) => a.plans(), (plans) =>
      plans.map((p) => `${String(p.id).padEnd(12)} ${p.name}: running ${p.running_session_limit}, cycle ${p.cycle_session_limit ?? 'unlimited'}, residential ${p.residential_cycle_mb_limit ?? 'none'} MB, locations ${p.location_access ? 'yes' : 'no'}, API ${p.programmatic_access ? 'yes' : 'no'}`).join('\n'),
    ),
  );

  const accounts = program.command('accounts').description('manage accounts');
  common(accounts.command('create').description('create an account with its plan(s) and print its first API key (shown once)'))
    .requiredOption('--contact <address>', 'contact e-mail address')
    .requiredOption('--plan <id...>', 'plan id(s); each is one pool, in this order')
    .option('--cycle-start <YYYY-MM-DD>', 'first day of the first cycle (default today)')
    .option('--language <code>', 'default browser language')
    .option('--layout <code>', 'default keyboard layout')
    .action((options: Common & { contact: string; plan: string[]; cycleStart?: string; language?: string; layout?: string }) =>
      withData(
        options,
        ({ accounts: a }) => a.create({ contact: options.contact, plans: options.plan, ...(options.cycleStart ? { cycleStart: options.cycleStart } : {}), ...(options.language ? { language: options.language } : {}), ...(options.layout ? { layout: options.layout } : {}) }),
        (created) => `account ${created.account.id} (${created.account.contact}), plans ${created.account.subscriptions.map((s) => s.plan_id).join(', ')}\nAPI key (shown only now, keep it on your server): ${created.apiKey.key}`,
      ),
    );
  common(accounts.command('list').description('list accounts')).action((options: Common) =>
    withData(options, ({ accounts: a }) => a.list(), (list) => list.map((a) => `${a.id}  ${a.contact}  ${a.subscriptions.map((s) => s.plan_id).join(', ')}`).join('\n') || 'no accounts'),
  );

  const keys = program.command('keys').description('manage API keys');
  common(keys.command('create').description('create another API key for an account (shown once)'))
    .requiredOption('--account <id>', 'account id')
    .action((options: Common & { account: string }) => withData(options, ({ accounts: a }) => a.createKey(options.account), (key) => `API key ${key.id} (shown only now): ${key.key}`));
  common(keys.command('list').description("list an account's keys (never the keys themselves)"))
    .requiredOption('--account <id>', 'account id')
    .action((options: Common & { account: string }) =>
      withData(options, ({ accounts: a }) => a.listKeys(options.account), (list) => list.map((k) => `${k.id}  ${k.prefix}...  ${k.created}${k.revoked ? '  revoked' : ''}`).join('\n') || 'no keys'),
    );
  common(keys.command('revoke').description('revoke an API key at once').argument('<keyId>', 'key id from keys list')).action((keyId: string, options: Common) =>
    withData(options, ({ accounts: a }) => a.revokeKey(keyId), (r) => `revoked ${r.id}`),
  );

  // Session webhooks (decisions.md 61): what an account's own v8 calls do, for its operator.
  const webhooks = program.command('webhooks').description("an account's session webhook: set (prints its secret once), show, remove");
  const webhooksOf = (opened: Awaited<ReturnType<typeof openDataDirectory>>, config: EngineConfig) =>
    new SessionWebhooks({ store: opened.store, settings: config.webhooks, nodeId: 'operator-cli', now: Date.now, logger: silentLogger() });
  const knownAccount = async (opened: Awaited<ReturnType<typeof openDataDirectory>>, id: string) => {
    if (!(await opened.store.account(id))) throw new Error(`unknown account "${id}"; remote-browser-kit accounts list shows them`);
  };
  common(webhooks.command('set').description('set the address that receives the events of the account\'s sessions (https; the secret is shown only now)'))
    .requiredOption('--account <id>', 'account id')
    .requiredOption('--url <url>', 'the receiver, https://...')
    .action((options: Common & { account: string; url: string }) =>
      withData(options, async (opened, config) => {
        await knownAccount(opened, options.account);
        const outcome = await webhooksOf(opened, config).set(options.account, options.url);
        if (outcome.status !== 'ok') throw new Error(outcome.message);
        return outcome.webhook!;
      }, (webhook) => `webhook ${webhook.url}\nsigning secret (shown only now, keep it on the receiving server): ${webhook.secret}`),
    );
  common(webhooks.command('show').description("the account's webhook and its queue of events"))
    .requiredOption('--account <id>', 'account id')
    .action((options: Common & { account: string }) =>
      withData(options, async (opened, config) => {
        await knownAccount(opened, options.account);
        const hooks = webhooksOf(opened, config);
        const outcome = await hooks.get(options.account);
        return { webhook: outcome.status === 'ok' ? outcome.webhook : null, events: await hooks.queue.counts(options.account) };
      }, ({ webhook, events }) =>
        webhook
          ? `webhook ${webhook.url} (since ${webhook.created})\nevents: ${events.pending} waiting, ${events.delivered} delivered, ${events.failed} given up${events.lastError ? `; last error: ${events.lastError}` : ''}`
          : 'no webhook'),
    );
  common(webhooks.command('remove').description("remove the account's webhook (events not yet delivered are dropped)"))
    .requiredOption('--account <id>', 'account id')
    .action((options: Common & { account: string }) =>
      withData(options, async (opened, config) => {
        await knownAccount(opened, options.account);
        await webhooksOf(opened, config).remove(options.account);
        return { account: options.account, removed: true };
      }, (r) => `webhook of ${r.account} removed`),
    );

  // Sessions a removed node left end here, not on an engine: their webhook events are queued here too.
  const queueNodeGoneEvents = async (opened: Awaited<ReturnType<typeof openDataDirectory>>, config: EngineConfig, moved: Array<{ id: string; status: string }>) => {
    const hooks = webhooksOf(opened, config);
    for (const { id, status } of moved) {
      const type = eventTypeOf(status, 'node-gone');
      const row = type && (await opened.store.session(id));
      if (type && row) await hooks.queueEvent(row, type);
    }
  };

  const nodes = program.command('nodes').description('the nodes of a cluster: their load, drain, remove');
  common(nodes.command('list').description('list the nodes with their state, load and capacity')).action((options: Common) =>
    withData(options, ({ store }, config) => listNodes(store, config), (list) =>
      list.map((n) => `${n.id.padEnd(20)} ${n.state.padEnd(9)} ${n.alive ? 'alive' : 'silent'}  ${n.load}/${n.capacity ?? 'no limit'} sessions awake, ${n.standby} in standby  ${n.browsers.join(', ')}  ${n.internalUrl}`).join('\n') || 'no nodes',
    ),
  );
  common(nodes.command('drain').description('take no new sessions on a node; its sessions run to their end').argument('<nodeId>', 'node id from nodes list')).action(
    (nodeId: string, options: Common) => withData(options, ({ store }) => drainNode(store, nodeId), (r) => `node ${r.id} drains: ${r.load} sessions run to their end, no new ones go there`),
  );
  common(nodes.command('remove').description('forget a node that has stopped (its sessions left end as suspended)').argument('<nodeId>', 'node id from nodes list')).action(
    (nodeId: string, options: Common) => withData(options, (opened, config) => removeNode(opened.store, config, nodeId, Date.now(), (moved) => queueNodeGoneEvents(opened, config, moved)), (r) => `node ${r.id} removed; ${r.ended} of its sessions ended`),
  );

  program
    .command('doctor')
    .description('report what this host has for running sessions and what is missing')
    .option('--json', 'print the report as JSON')
    .option('--config <file>', 'the engine\'s configuration file (its warm pool is shown)')
    .option('--data <dir>', 'the data directory (whether others on this host can read it)', '.data')
    .action(async (options: { json?: boolean; config?: string; data: string }) => {
      const report = await runDoctor(await loadEngineConfig(options.config), options.data);
      console.log(options.json ? JSON.stringify(report, null, 2) : formatDoctor(report));
      process.exitCode = report.ok ? 0 : 1;
    });
  return program;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildCli().parseAsync(process.argv);
}

/** A clock that adds the number of ms in `file` (re-read when it changes): for tests only. */
export function offsetClock(file: string): () => number {
  let mtime = -1;
  let offset = 0;
  return () => {
    try {
      const stat = statSync(file);
      if (stat.mtimeMs !== mtime) {
        mtime = stat.mtimeMs;
        offset = Number(readFileSync(file, 'utf8').trim()) || 0;
      }
    } catch {
      offset = 0;
    }
    return Date.now() + offset;
  };
}
