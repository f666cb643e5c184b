// `npm run bench -- session-reader`: what a session's reader costs as a worker thread against a
// child process (issue 53, decisions.md 182), measured side by side in one run:
// - start_ms: from the spawn to its first message back (median of RBK_BENCH_SAMPLES, interleaved);
// - rss_mb: the node's resident memory each one adds, with ten alive at once (a worker: the
//   process's growth; a child: its own resident set);
// - round_trip_us: one small message there and back (median of 2,000);
// - reader_rss_mb: the session's own reader (runtime/browser/browser-reader.ts as built in dist/,
//   `npm run build` first), ten alive, with what it loads (ws);
// - contains_parse_oom: whether a JSON.parse that outgrows the reader's heap (12 MB of `[],`,
//   4 million arrays, in a 64 MB heap) ends only the reader (true) or the whole process (false).
//   Each try runs in a process of its own, so the bench survives the answer.
import { fork, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { percentile, report } from './stats.js';

const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 10);
const ECHO = "const port = require('node:worker_threads').parentPort ?? process; port.on('message', (m) => (port.postMessage ?? port.send).call(port, m)); (port.postMessage ?? port.send).call(port, 'ready');";
const OOM = "JSON.parse('{\"a\":[' + '[],'.repeat(4 * 1024 * 1024) + '[]]}'); (require('node:worker_threads').parentPort ?? process).postMessage?.('parsed');";

interface Reader {
  post(message: unknown): void;
  once(handler: (message: unknown) => void): void;
  stop(): Promise<void>;
  rssMb(): number | null;
}

function workerReader(): Reader {
  const worker = new Worker(ECHO, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 64 } });
  return {
    post: (message) => worker.postMessage(message),
    once: (handler) => worker.once('message', handler),
    stop: async () => void (await worker.terminate()),
    rssMb: () => null,
  };
}

function childReader(): Reader {
  const child = fork('-e', [ECHO], { execArgv: ['--max-old-space-size=64', '-e', ECHO], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  return {
    post: (message) => child.send(message as string),
    once: (handler) => child.once('message', handler),
    stop: async () => {
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
    },
    rssMb: () => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024,
  };
}

async function started(make: () => Reader): Promise<{ reader: Reader; ms: number }> {
  const began = performance.now();
  const reader = make();
  await new Promise((resolve) => reader.once(resolve));
  return { reader, ms: performance.now() - began };
}

async function roundTripUs(reader: Reader): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const began = performance.now();
    await new Promise((resolve) => (reader.once(resolve), reader.post('x')));
    times.push((performance.now() - began) * 1000);
  }
  return percentile(times, 50);
}

/** Whether a parse past the reader's heap ends only the reader: run in a process of its own. */
function containsParseOom(kind: 'worker' | 'child'): boolean {
  const script = kind === 'worker'
    ? `const { Worker } = require('node:worker_threads'); const w = new Worker(${JSON.stringify(OOM)}, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 64 } }); w.on('error', () => {}); w.on('exit', () => console.log('alive'));`
    : `const { spawn } = require('node:child_process'); const c = spawn(process.execPath, ['--max-old-space-size=64', '-e', ${JSON.stringify(OOM)}], { stdio: 'ignore' }); c.on('exit', () => console.log('alive'));`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
  return run.stdout.includes('alive');
}

/** The built reader's memory, ten alive, measured in a process of its own (the bench's own modules aside). */
function builtReaderRssMb(): number | null {
  const built = new URL('../dist/engine/runtime/browser/browser-reader.js', import.meta.url);
  if (!existsSync(built)) return null;
  const script = `import(${JSON.stringify(built.href)}).then(async ({ BrowserReader }) => { const before = process.memoryUsage().rss; const readers = Array.from({ length: 10 }, () => new BrowserReader()); await new Promise((r) => setTimeout(r, 3000)); console.log((process.memoryUsage().rss - before) / 10 / 1048576); await Promise.all(readers.map((r) => r.stop())); })`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
  return run.status === 0 ? Number(run.stdout.trim()) : null;
}

export async function sessionReaderBench(): Promise<void> {
  const built = builtReaderRssMb();
  if (built === null) console.error('session-reader: no dist/ (npm run build), so the built reader is not measured');
  else report('session-reader', 'reader_rss_mb', built, 'MB', { alive: 10 });
  const kinds = { worker: workerReader, child: childReader } as const;
  const starts: Record<string, number[]> = { worker: [], child: [] };
  for (let i = 0; i < samples; i++) {
    for (const [kind, make] of Object.entries(kinds)) {
      const { reader, ms } = await started(make);
      starts[kind]!.push(ms);
      await reader.stop();
    }
  }
  for (const [kind, make] of Object.entries(kinds)) {
    report('session-reader', 'start_ms', percentile(starts[kind]!, 50), 'ms', { kind, samples });
    const before = process.memoryUsage().rss;
    const ten = await Promise.all(Array.from({ length: 10 }, () => started(make)));
    const own = ten.map(({ reader }) => reader.rssMb());
    const rss = own.every((mb) => mb !== null) ? percentile(own as number[], 50) : (process.memoryUsage().rss - before) / 10 / 1024 / 1024;
    report('session-reader', 'rss_mb', rss, 'MB', { kind, alive: 10 });
    report('session-reader', 'round_trip_us', await roundTripUs(ten[0]!.reader), 'us', { kind });
    await Promise.all(ten.map(({ reader }) => reader.stop()));
    report('session-reader', 'contains_parse_oom', containsParseOom(kind as 'worker' | 'child') ? 1 : 0, 'bool', { kind, heapMb: 64 });
  }
}
