// The `remote-browser-kit` command line for operators: doctor (and, as the service grows, serve,
// accounts, keys, plans). Every command has --json output for scripts.
import { Command } from 'commander';
import { formatDoctor, runDoctor } from './doctor.js';

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
  return program;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildCli().parseAsync(process.argv);
}
