// The `remote-browser-kit` command line for operators: doctor (and, as the service grows, serve,
// accounts, keys, plans). Every command has --json output for scripts.
import { Command } from 'commander';
import { formatDoctor, runDoctor } from './doctor.js';
import { createEngine } from './engine.js';

export function buildCli(): Command {
  const program = new Command('remote-browser-kit').description('Remote browser sessions: the engine and its operator tools');
  program
    .command('doctor')
    .description('report what this host has for running sessions and what is missing')
    .option('--json', 'print the report as JSON')
    .action(async (options: { json?: boolean }) => {
      const report = await runDoctor();
      console.log(options.json ? JSON.stringify(report, null, 2) : formatDoctor(report));
      process.exitCode = report.ok ? 0 : 1;
    });
  program
    .command('serve')
    .description('run the engine: reap what an earlier run left, then serve the HTTP interface')
    .option('--port <port>', 'TCP port', '8640')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--data <dir>', 'data directory', '.data')
    .option('--allow-egress <cidr...>', 'private ranges the remote browsers may reach (e.g. 127.0.0.0/8 for a local demo)')
    .option('--warm <n>', 'ready Chromium browsers to keep warm', '0')
    .option('--json', 'print start-up facts as one JSON line')
    .action(async (options: { port: string; host: string; data: string; allowEgress?: string[]; warm: string; json?: boolean }) => {
      const warm = Number(options.warm);
      const engine = await createEngine({
        port: Number(options.port),
        host: options.host,
        dataDir: options.data,
        egressAllow: options.allowEgress ?? [],
        ...(warm > 0 ? { warm: { browsers: [{ browser: 'chromium', count: warm }] } } : {}),
      });
      const facts = { url: engine.url, reaped: engine.reaped, browsers: engine.runtime.images.filter((i) => i.enabled).map((i) => i.id) };
      console.log(options.json ? JSON.stringify(facts) : `remote-browser-kit engine listening on ${engine.url}\n  browsers: ${facts.browsers.join(', ') || 'none (run remote-browser-kit doctor)'}\n  cleaned from an earlier run: ${engine.reaped.directories} session directories, ${engine.reaped.processes} processes`);
      const stop = async () => {
        await engine.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  return program;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildCli().parseAsync(process.argv);
}
