// `npm run bench -- blast-radius`: what one session's bytes cost the others (issue 53). A real
// engine (a child process, the API as customers call it) runs ten confined Chromium sessions, two
// of them another account's; a program drives each of nine over DevTools (an evaluate of 1 + 1 on
// its page, one after another) while `/healthz` is asked every 50 ms. The tenth is the victim: as
// a process in it could, the bench writes into the engine's connections from its side
// (test/helpers/session-side.ts), in two phases after a quiet one, each RBK_BENCH_PHASE_MS long:
// - flood: well-formed DevTools events of 1 MB each, as fast as the engine reads them (past the
//   guard's 16 MiB a second the victim ends, saying why);
// - heap: a message that would parse into 4 million arrays (half a GB in the engine's heap, were
//   it parsed), which the victim's reader refuses unparsed: the victim ends, saying why.
// Printed per phase: the others' command p50 and its ratio to quiet, /healthz p50 and max, how many
// other sessions still run, and whether the phase's victim ended (each attack has a victim of its
// own); first the engine's memory per idle session.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { Api, createAccount, PLANS, removeWorkspace, send, startEngine, startPageServer, testConfig, waitForStatus } from '../test/api/harness.js';
import { relaysOfEngine, textFrame, uidOfNewSession, writeFromSession } from '../test/helpers/session-side.js';
import { percentile, report } from './stats.js';

const PHASE_MS = Number(process.env.RBK_BENCH_PHASE_MS ?? 8000);

/** A program's DevTools connection through the automation channel: one evaluate at a time on its page. */
class Program {
  private next = 1;
  private readonly waiting = new Map<number, (message: { result?: any; error?: unknown }) => void>();
  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: any; error?: unknown };
      if (message.id !== undefined) this.waiting.get(message.id)?.(message);
    });
  }

  static async attach(api: Api, engineUrl: string, vmId: string): Promise<{ program: Program; sessionId: string }> {
    const answer = await api.get(`/v8/vm/automation?id=${vmId}`);
    const address = new URL(answer.json.browserWSEndpoint as string);
    const socket = new WebSocket(`${engineUrl.replace(/^http/, 'ws')}${address.pathname}${address.search}`, { perMessageDeflate: false });
    await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));
    const program = new Program(socket);
    const { targetInfos } = await program.send('Target.getTargets');
    const page = (targetInfos as Array<{ type: string; targetId: string }>).find((target) => target.type === 'page')!;
    const { sessionId } = await program.send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
    return { program, sessionId };
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<any> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (message) => {
        this.waiting.delete(id);
        if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
        else resolve(message.result);
      });
      this.socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  }

  close(): void {
    this.socket.terminate();
  }
}

/** Runs every program's evaluates and the /healthz sampler for `ms`; answers the latencies. */
async function measure(engineUrl: string, programs: Array<{ program: Program; sessionId: string }>, ms: number): Promise<{ commands: number[]; health: number[] }> {
  const until = performance.now() + ms;
  const commands: number[] = [];
  const health: number[] = [];
  const drive = async ({ program, sessionId }: { program: Program; sessionId: string }) => {
    while (performance.now() < until) {
      const began = performance.now();
      await program.send('Runtime.evaluate', { expression: '1 + 1', returnByValue: true }, sessionId);
      commands.push(performance.now() - began);
    }
  };
  const sample = async () => {
    while (performance.now() < until) {
      const began = performance.now();
      await send(engineUrl, 'GET', '/healthz');
      health.push(performance.now() - began);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await Promise.all([...programs.map(drive), sample()]);
  return { commands, health };
}

/** Keeps writing `frame` into every relay of the session `uid` until `ms` have passed. */
async function keepWriting(enginePid: number, uid: number, frame: Buffer, ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const relays = (await relaysOfEngine(enginePid)).filter((relay) => relay.uid === uid);
    if (relays.length === 0) return;
    await Promise.all(relays.map((relay) => writeFromSession(relay.pid, Buffer.concat(Array.from({ length: 16 }, () => frame)))));
  }
}

function rssMb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

export async function blastRadiusBench(): Promise<void> {
  await new Promise<void>((resolve, reject) => execFile('python3', ['-c', 'import os; os.pidfd_open'], (error) => (error ? reject(new Error('the bench writes from a session with python3 and pidfd_getfd')) : resolve())));
  const pages = await startPageServer();
  const engine = await startEngine({ config: testConfig({}) });
  const enginePid = engine.child.pid!;
  try {
    const owner = new Api(engine.url, (await createAccount(engine.workspace, [PLANS.burst, PLANS.burst, PLANS.burst])).key);
    const other = new Api(engine.url, (await createAccount(engine.workspace, [PLANS.basic])).key);
    const baseRss = rssMb(enginePid);
    const create = async (api: Api) => {
      const created = await api.create({ browser: 'chromium', url: pages.page });
      if (created.json?.status !== 'ok') throw new Error(`create: ${created.text}`);
      if ((await waitForStatus(api, created.json.vmId, ['running'], 60_000)) !== 'running') throw new Error('a session did not run');
      return created.json.vmId as string;
    };
    const owned: string[] = [];
    for (let i = 0; i < 7; i++) owned.push(await create(owner));
    const others = [await create(other), await create(other)];
    /** A victim of the owner's, and the uid its processes run as. */
    const newVictim = async () => {
      const before = new Set((await relaysOfEngine(enginePid)).map((relay) => relay.uid));
      const id = await create(owner);
      return { id, uid: await uidOfNewSession(enginePid, before) };
    };
    let victim = await newVictim();
    // Ten idle sessions, the warm pool's browsers among what the engine holds.
    report('blast-radius', 'engine_rss_per_session', (rssMb(enginePid) - baseRss) / 10, 'MB', { sessions: 10, engineRssMb: Math.round(rssMb(enginePid)) });
    const programs = await Promise.all([...owned.map((id) => Program.attach(owner, engine.url, id)), ...others.map((id) => Program.attach(other, engine.url, id))]);
    const running = async () => {
      let count = 0;
      for (const id of owned) if ((await waitForStatus(owner, id, ['running'], 0)) === 'running') count++;
      for (const id of others) if ((await waitForStatus(other, id, ['running'], 0)) === 'running') count++;
      return count;
    };
    const phase = async (name: string, attack: () => Promise<void>, quietP50?: number) => {
      const [figures] = await Promise.all([measure(engine.url, programs, PHASE_MS), attack()]);
      const p50 = percentile(figures.commands, 50);
      report('blast-radius', 'others_command_p50', p50, 'ms', { phase: name, commands: figures.commands.length, ...(quietP50 ? { ratioToQuiet: Math.round((p50 / quietP50) * 100) / 100 } : {}) });
      report('blast-radius', 'healthz_p50', percentile(figures.health, 50), 'ms', { phase: name, max: Math.round(Math.max(...figures.health)), samples: figures.health.length });
      const victimStatus = engine.alive() ? await waitForStatus(owner, victim.id, ['running'], 0).catch(() => 'unknown') : 'unknown';
      report('blast-radius', 'others_running', engine.alive() ? await running() : 0, 'sessions', { phase: name, of: 9, engineAlive: engine.alive(), victim: victimStatus, ...(engine.alive() ? { engineRssMb: Math.round(rssMb(enginePid)) } : {}) });
      return p50;
    };
    const quiet = await phase('quiet', async () => undefined);
    const megabyte = textFrame(JSON.stringify({ method: 'Page.lifecycleEvent', params: { name: 'x'.repeat(1024 * 1024) } }));
    await phase('flood', () => keepWriting(enginePid, victim.uid, megabyte, PHASE_MS), quiet);
    report('blast-radius', 'victim_ended', (await waitForStatus(owner, victim.id, ['suspended'], 20_000)) === 'suspended' ? 1 : 0, 'bool', { phase: 'flood' });
    // A victim of its own for the next attack.
    victim = await newVictim();
    const arrays = textFrame(`{"method":"Page.x","params":{"a":[${'[],'.repeat(4 * 1024 * 1024)}[]]}}`);
    await phase('heap', () => keepWriting(enginePid, victim.uid, arrays, PHASE_MS), quiet);
    report('blast-radius', 'victim_ended', (await waitForStatus(owner, victim.id, ['suspended'], 20_000)) === 'suspended' ? 1 : 0, 'bool', { phase: 'heap' });
    for (const { program } of programs) program.close();
  } finally {
    await engine.stop();
    await removeWorkspace(engine.workspace);
    await pages.close();
  }
}
