// A session's reader (issue 53, decisions.md 182): a worker thread of its own, with a heap limit,
// that holds the engine's own connections to the session's browser (the DevTools guard, the BiDi
// hub) and reads every message on them, so what a browser made to lie writes is parsed there and
// never in the thread that serves every session. The engine gets plain objects, checked on arrival
// (browser-reader-messages.ts). A worker that throws, runs out of its heap, posts what the protocol
// does not hold, or misses its heartbeat ends: every line it held is told so (its session ends with
// the reason), and the node goes on.
import { EventEmitter } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BrowserLine, LineLimits, LineSink } from './browser-line.js';
import { z } from 'zod';
import { LINES_PER_READER, SEND_LIMIT, type FromReader, type ToReader } from './browser-reader-messages.js';

/** The worker's heap: far above what its lines hold (messages are passed on as they are read), and a bound on what one browser costs the engine. */
export const READER_HEAP_MB = 256;
/** How often the engine asks the worker whether it is there, and how long it may stay silent. */
const HEARTBEAT_MS = 5_000;
const SILENT_MS = 20_000;

const line = z.number().int().min(0);
/** What the worker may post, checked on arrival (its type: browser-reader-messages.ts). */
const fromReader: z.ZodType<FromReader> = z.discriminatedUnion('type', [
  z.object({ type: z.literal('opened'), line }),
  // Only the top level is looked at here: the line read the whole within its limits.
  z.object({ type: z.literal('message'), line, value: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('unreadable'), line, why: z.string().max(500), exceeded: z.object({ id: z.number().int().min(0).nullable() }).optional() }),
  z.object({ type: z.literal('closed'), line, why: z.string().max(500) }),
  z.object({ type: z.literal('pong'), n: z.number().int() }),
]);

/**
 * The worker's module, beside this one; from the sources (tests, `npm start` before a build) it is
 * loaded through tsx. Its path is made from this file's own, never as `new URL('./…',
 * import.meta.url)`: Vite rewrites that form into a served asset's address (jsdom tests).
 */
function workerOf(heapMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 4, stackSizeMb: 4 };
  const here = fileURLToPath(import.meta.url);
  const fromSources = here.endsWith('.ts');
  const entry = pathToFileURL(join(dirname(here), fromSources ? 'browser-reader-worker.ts' : 'browser-reader-worker.js'));
  if (fromSources) return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true, resourceLimits });
  return new Worker(entry, { resourceLimits });
}

export class BrowserReader extends EventEmitter<{ failed: [string] }> {
  private readonly worker: Worker;
  private readonly sinks = new Map<number, LineSink>();
  private nextLine = 0;
  private lastHeard = performance.now();
  private readonly heartbeat: NodeJS.Timeout;
  private stopping = false;
  /** Why the worker ended, once it did; null while it reads. */
  failure: string | null = null;

  constructor(heapMb = READER_HEAP_MB) {
    super();
    this.worker = workerOf(heapMb);
    // The engine's life is not the worker's to hold: an engine that exits takes its readers with it.
    this.worker.unref();
    this.worker.on('message', (raw: unknown) => this.heard(raw));
    // An exception or an exhausted heap in the worker comes here instead of ending the process.
    this.worker.on('error', (error: Error) => this.fail(`${(error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'it ran out of its heap' : 'it failed'}: ${String(error.message).slice(0, 200)}`));
    this.worker.on('exit', (code) => this.fail(`it exited (code ${code})`));
    let n = 0;
    this.heartbeat = setInterval(() => {
      if (performance.now() - this.lastHeard > SILENT_MS) return this.fail(`it missed its heartbeat for ${SILENT_MS / 1000} s`);
      this.post({ type: 'ping', n: n++ });
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** How many lines it holds now. */
  get lineCount(): number {
    return this.sinks.size;
  }

  /** Opens a line to `url` in the worker; `sink` hears what it reads (as browser-line.ts's openLine). */
  open(url: string, limits: LineLimits, sink: LineSink): BrowserLine {
    const line = this.nextLine++;
    const closed = (why: string) => {
      if (!this.sinks.delete(line)) return;
      sink.close(why);
    };
    if (this.failure !== null || this.sinks.size >= LINES_PER_READER) {
      const why = this.failure ?? `more than ${LINES_PER_READER} lines to one browser`;
      queueMicrotask(() => (sink.unreadable(why), sink.close(why)));
      return { send: () => undefined, close: () => undefined, terminate: () => undefined };
    }
    this.sinks.set(line, sink);
    this.post({ type: 'open', line, url, maxPayload: limits.maxPayload, maxDepth: limits.maxDepth, ...(limits.host ? { host: limits.host } : {}), ...(limits.bytesPerSecond ? { bytesPerSecond: limits.bytesPerSecond } : {}) });
    return {
      send: (text) => {
        if (!this.sinks.has(line)) return;
        if (text.length > SEND_LIMIT) return; // the engine's own commands are far below; a caller bounds a program's
        this.post({ type: 'send', line, text });
      },
      close: () => this.post({ type: 'close', line }),
      // The worker cuts the line; its sink is told at once, not when the worker says so.
      terminate: () => {
        this.post({ type: 'close', line });
        closed('the line was cut');
      },
    };
  }

  /** Ends the worker and every line it holds (the session stops). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.heartbeat);
    for (const [line, sink] of [...this.sinks]) {
      this.sinks.delete(line);
      sink.close('the session stopped');
    }
    await this.worker.terminate().catch(() => undefined);
  }

  private post(message: ToReader): void {
    if (this.failure !== null || this.stopping) return;
    this.worker.postMessage(message);
  }

  private heard(raw: unknown): void {
    this.lastHeard = performance.now();
    const parsed = fromReader.safeParse(raw);
    if (!parsed.success) return this.fail('it posted a message the protocol does not hold');
    const message = parsed.data;
    if (message.type === 'pong') return;
    const sink = this.sinks.get(message.line);
    if (!sink) return;
    try {
      switch (message.type) {
        case 'opened':
          return sink.open();
        case 'message':
          return sink.message(message.value);
        case 'unreadable':
          return sink.unreadable(message.why, message.exceeded);
        case 'closed':
          this.sinks.delete(message.line);
          return sink.close(message.why);
      }
    } catch (error) {
      // A line's reader failing on what it was handed: that line's message was unreadable to it.
      sink.unreadable(`a message the engine could not handle (${String((error as Error)?.message ?? error).slice(0, 200)})`);
    }
  }

  /** The worker is gone: each line hears why (its session ends), and it takes no more. */
  private fail(why: string): void {
    if (this.failure !== null || this.stopping) return;
    this.failure = `the session's reader ended: ${why}`;
    clearInterval(this.heartbeat);
    void this.worker.terminate().catch(() => undefined);
    for (const [line, sink] of [...this.sinks]) {
      this.sinks.delete(line);
      try {
        sink.unreadable(this.failure);
        sink.close(this.failure);
      } catch {
        // Each line's own reader; the rest are still told.
      }
    }
    this.emit('failed', this.failure);
  }
}
