// `npm run bench -- app-window` (issue 44, decisions.md 175): how long a Chromium app window takes
// to start, warm (a warm browser made fullscreen at hand-out) against cold (kiosk mode, on an
// engine without warm browsers), beside a warm browser window. Each figure is the runtime's own
// start of the session (`readyMs`, what the engine logs as `startMs`), one create at a time; before
// each warm create the pool has a warm Chromium again. RBK_BENCH_SAMPLES (default 5) a kind.
import { startEngine, type EngineFixture } from '../test/helpers/engine.js';
import { percentile, report } from './stats.js';

const samples = Number(process.env.RBK_BENCH_SAMPLES ?? 5);
const START_MS = 90_000;

async function until(probe: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Creates a Chromium session in `window` and answers its start kind and the runtime's start, once it runs; then removes it. */
async function start(fixture: EngineFixture, window: 'app' | 'browser'): Promise<{ kind: string; ms: number }> {
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/`, window });
  if (created.status !== 'ok') throw new Error(`create: ${JSON.stringify(created)}`);
  let runtimeId: string | null | undefined;
  await until(async () => (runtimeId = (await fixture.engine.store.session(created.vmId))?.runtime_id) != null, START_MS, 'no running session');
  const session = fixture.engine.runtime.get(runtimeId!)!;
  const figure = { kind: session.start, ms: session.readyMs };
  await fixture.call('/vm/remove', { id: created.vmId });
  return figure;
}

async function series(fixture: EngineFixture, window: 'app' | 'browser', warm: boolean): Promise<Array<{ kind: string; ms: number }>> {
  const figures: Array<{ kind: string; ms: number }> = [];
  for (let i = 0; i < samples; i++) {
    if (warm) await until(() => fixture.engine.runtime.warmStats().browsers.some((kind) => kind.browser === 'chromium' && kind.count > 0), START_MS, 'no warm Chromium');
    figures.push(await start(fixture, window));
  }
  return figures;
}

function tell(name: string, figures: Array<{ kind: string; ms: number }>): void {
  const kinds = [...new Set(figures.map((f) => f.kind))].join(',');
  report('app-window', `${name} start p50`, percentile(figures.map((f) => f.ms), 50), 'ms', { samples: figures.map((f) => Math.round(f.ms)), kinds });
}

export async function appWindowBench(): Promise<void> {
  const page = '<!doctype html><title>page</title><body style="background:#284">';
  const warm = await startEngine({ name: 'bench-app-window-warm', site: page, config: { warm: { memoryMb: 1024, browsers: 1, displays: 0, languages: ['en'], quietMinutes: 10 } } });
  try {
    tell('app window, warm', await series(warm, 'app', true));
    tell('browser window, warm', await series(warm, 'browser', true));
  } finally {
    await warm.close();
  }
  const cold = await startEngine({ name: 'bench-app-window-cold', site: page, config: { warm: { memoryMb: 0, browsers: 0, displays: 0, languages: ['en'], quietMinutes: 10 } } });
  try {
    tell('app window, cold (kiosk)', await series(cold, 'app', false));
  } finally {
    await cold.close();
  }
}
