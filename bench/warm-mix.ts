// Part of `npm run bench -- runtime`: sessions of a mix (exits, zones, layouts, two languages,
// Firefox) created at a steady rate against the engine's default warm pool (sized by demand under
// its memory budget, decisions.md 64), confined: create to running, how many started warm, and
// what the pool holds in memory.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_WARM, parseEngineConfig, warmPoolOptions } from '../src/engine/config.js';
import { startEgressRoute } from '../src/engine/runtime/egress/egress.js';
import { findMarkedProcesses } from '../src/engine/runtime/sandbox/processes.js';
import { SessionRuntime, type SessionSpec } from '../src/engine/runtime/runtime.js';
import { percentile, report } from './stats.js';

const egress = { allow: ['127.0.0.1/32'] };
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** PSS of the runtime's processes, in MB, by slot, and whether the slot has a browser. */
async function pssBySlot(root: string): Promise<Array<{ browser: string | null; mb: number }>> {
  const processes = (await findMarkedProcesses({ root })).filter((p) => !p.zombie);
  // Renderers overwrite their environment (and marker): they belong to their group's slot.
  const groupMarker = new Map(processes.filter((p) => p.marker).map((p) => [p.group, p.marker!]));
  const slots = new Map<string, { browser: string | null; mb: number }>();
  for (const p of processes) {
    const marker = p.marker ?? groupMarker.get(p.group) ?? `group ${p.group}`;
    const rollup = await readFile(`/proc/${p.pid}/smaps_rollup`, 'utf8').catch(() => '');
    const slot = slots.get(marker) ?? { browser: null, mb: 0 };
    slot.mb += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024;
    slot.browser ??= /firefox/.test(p.command) ? 'firefox-esr' : /chromium/.test(p.command) ? 'chromium' : null;
    slots.set(marker, slot);
  }
  return [...slots.values()];
}

export async function warmMixBench(root: string, origin: string): Promise<void> {
  const rounds = Number(process.env.RBK_BENCH_MIX_ROUNDS ?? 6);
  const gapMs = Number(process.env.RBK_BENCH_MIX_GAP_MS ?? 2000);
  // Two upstream proxies on this host stand in for an exit city and the residential route.
  const [exit, residential] = await Promise.all(['exit', 'residential'].map((sessionId) => startEgressRoute({ sessionId, policy: egress })));
  const warm = warmPoolOptions(parseEngineConfig({}))!;
  const { runtime } = await SessionRuntime.open({ root: join(root, 'mix'), egress, warm });
  const mix: Array<Omit<SessionSpec, 'url'>> = [
    { browser: 'chromium', language: 'en', layout: 'us' },
    { browser: 'chromium', language: 'en', layout: 'us', timeZone: 'Asia/Tokyo', upstreamProxyUrl: exit!.proxyUrl },
    { browser: 'chromium', language: 'de', layout: 'de', timeZone: 'Europe/Berlin', upstreamProxyUrl: residential!.proxyUrl },
    { browser: 'firefox-esr', language: 'en', layout: 'de', upstreamProxyUrl: exit!.proxyUrl },
    { browser: 'chromium', language: 'de', layout: 'us', timeZone: 'America/New_York' },
  ];
  try {
    await runtime.warmed();
    const ready: number[] = [];
    const kinds: Record<string, number> = {};
    const live: Array<Promise<void>> = [];
    // The first round teaches the pool the languages and browsers in use; it is not counted.
    for (let round = 0; round <= rounds; round++) {
      for (const spec of mix) {
        const session = await runtime.startSession({ ...spec, url: `${origin}/` });
        if (process.env.RBK_BENCH_MIX_VERBOSE) console.error(round, spec.browser, spec.language, spec.timeZone ?? '', session.start, Math.round(session.readyMs));
        if (round > 0) {
          ready.push(session.readyMs);
          kinds[session.start] = (kinds[session.start] ?? 0) + 1;
        }
        // Each session lives a moment (its page loads), then ends; the next create comes at the gap.
        live.push(settle(1500).then(() => runtime.stopSession(session.id)));
        await settle(gapMs);
      }
    }
    await Promise.all(live);
    const extra = { samples: ready.length, confinement: 'confined', gap_ms: gapMs, mix: 'chromium en / en+exit+Tokyo / de+residential+Berlin+layout de / firefox en+exit+layout de / de+New York', start_kinds: kinds };
    report('runtime', 'create_to_running_ms_p50', percentile(ready, 50), 'ms', extra);
    report('runtime', 'create_to_running_ms_p95', percentile(ready, 95), 'ms', extra);
    report('runtime', 'warm_share', (kinds['warm-browser'] ?? 0) / ready.length, 'ratio', extra);
    // The pool at rest, filled for the mix: what each warm browser and the whole pool hold.
    await runtime.warmed();
    await settle(3000);
    const stats = runtime.warmStats();
    const slots = await pssBySlot(runtime.root);
    const total = slots.reduce((sum, s) => sum + s.mb, 0);
    const pool = { budget_mb: DEFAULT_WARM.memoryMb, browsers: stats.browsers, displays: stats.displays, measure: 'PSS of the warm slots\' processes' };
    for (const browser of ['chromium', 'firefox-esr']) {
      const of = slots.filter((s) => s.browser === browser);
      if (of.length > 0) report('runtime', 'memory_mb_per_warm_browser', of.reduce((sum, s) => sum + s.mb, 0) / of.length, 'MB', { ...pool, browser, slots: of.length, slot: 'sandbox, egress relay, display, sound server and browser' });
    }
    const displays = slots.filter((s) => s.browser === null);
    if (displays.length > 0) report('runtime', 'memory_mb_per_warm_display', displays.reduce((sum, s) => sum + s.mb, 0) / displays.length, 'MB', { ...pool, slots: displays.length });
    report('runtime', 'warm_pool_total_mb', total, 'MB', pool);
    report('runtime', 'warm_pool_cgroup_mb', stats.memoryMb, 'MB', { ...pool, measure: 'memory the warm slots\' cgroups hold (what the budget counts)' });
  } finally {
    await runtime.close();
    await Promise.all([exit!.close(), residential!.close()]);
  }
}
