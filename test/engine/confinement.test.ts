// The attacks a share-link holder made on the host (issue: "A share link must not be a key to the
// host"), each tried again on real confined sessions: Chromium and Firefox ESR on their own Xvnc,
// keys typed on their display as a viewer's would be, pages run through DevTools, and the host
// looked at from outside (other uids, /proc, the session's cgroup).
import { execFile, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, readFileSync, readlinkSync, statfsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findMarkedProcesses } from '../../src/engine/runtime/sandbox/processes.js';
import { SessionRuntime, type RuntimeEvent, type RuntimeSession } from '../../src/engine/runtime/runtime.js';
import { typeAddress, waitFor, x } from '../helpers/session.js';

const MEMORY_MB = 1024;
const DISK_MB = 96;
const PAGE = '<!doctype html><title>Plain page</title><body><p>plain</p>';

let target: Server;
let origin: string;
let root: string;
let dataDir: string;
let secretFile: string;
let runtime: SessionRuntime;
const events: RuntimeEvent[] = [];

/** Runs a program as the host's `nobody`: another local user, outside every session. */
function asNobody(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', command, ...args], { env: { PATH: process.env.PATH, ...env }, timeout: 5000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}



/** The session's processes that run the browser itself (not the wrappers that start them). */
async function browserProcesses(session: RuntimeSession, executable: RegExp): Promise<number[]> {
  return (await findMarkedProcesses({ dir: session.dir })).filter((p) => !p.zombie && executable.test(p.command.split(' ')[0] ?? '')).map((p) => p.pid);
}

function status(pid: number, field: string): string {
  return new RegExp(`^${field}:\\s*(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '';
}

/** The desktop name an RFB server gives every viewer in its ServerInit message. */
function desktopName(socket: Duplex): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    let step = 0;
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (step === 0 && buffer.length >= 12) {
        socket.write('RFB 003.008\n');
        buffer = buffer.subarray(12);
        step = 1;
      }
      if (step === 1 && buffer.length >= 1 && buffer.length >= 1 + buffer[0]!) {
        socket.write(Buffer.from([1])); // security type None
        buffer = buffer.subarray(1 + buffer[0]!);
        step = 2;
      }
      if (step === 2 && buffer.length >= 4) {
        socket.write(Buffer.from([1])); // ClientInit, shared
        buffer = buffer.subarray(4);
        step = 3;
      }
      if (step === 3 && buffer.length >= 24 && buffer.length >= 24 + buffer.readUInt32BE(20)) {
        resolve(buffer.subarray(24, 24 + buffer.readUInt32BE(20)).toString('utf8'));
        socket.destroy();
      }
    });
  });
}

beforeAll(async () => {
  target = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  dataDir = await mkdtemp(join(tmpdir(), 'rbk-confinement-'));
  root = join(dataDir, 'sessions');
  // What the attacker read: a root-only file in a root-only directory, and the engine's database.
  const secretDir = join(dataDir, 'secret');
  await mkdir(secretDir, { mode: 0o700 });
  secretFile = join(secretDir, 'token');
  await writeFile(secretFile, 'root-only secret', { mode: 0o600 });
  await writeFile(join(dataDir, 'engine.sqlite'), 'share_link_secret', { mode: 0o600 });
  await chmod(dataDir, 0o700);
  ({ runtime } = await SessionRuntime.open({ root, egress: { allow: ['127.0.0.1/32'] }, confinement: { memoryMb: MEMORY_MB, diskMb: DISK_MB, cpus: 1 } }));
  runtime.on('event', (event) => events.push(event));
});

afterAll(async () => {
  await runtime?.close();
  await new Promise((resolve) => target?.close(resolve));
  await rm(dataDir, { recursive: true, force: true });
});

describe('two confined Chromium sessions', () => {
  let a: RuntimeSession;
  let b: RuntimeSession;

  beforeAll(async () => {
    [a, b] = await Promise.all([
      runtime.startSession({ browser: 'chromium', url: `${origin}/a`, language: 'en', layout: 'us' }),
      runtime.startSession({ browser: 'chromium', url: `${origin}/b`, language: 'en', layout: 'us' }),
    ]);
    // Ready comes when the first page is on its way; the tests below want it loaded (renderers up).
    for (const session of [a, b]) await waitFor(() => session.control!.evaluate('document.title').catch(() => ''), (title) => title === 'Plain page');
  });

  it('run as uids of their own, never root and never the same, with Chromium\'s own sandbox on', async () => {
    const uids = new Set<number>();
    for (const session of [a, b]) {
      const pids = await browserProcesses(session, /chromium$/);
      expect(pids.length).toBeGreaterThan(2);
      for (const pid of pids) expect(status(pid, 'Uid').split(/\s+/)).toEqual(Array(4).fill(String(session.sandbox.uid)));
      uids.add(session.sandbox.uid!);
      const browser = pids.find((pid) => !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type='))!;
      expect(readFileSync(`/proc/${browser}/cmdline`, 'utf8')).not.toContain('--no-sandbox');
      // Renderers live in user and network namespaces of their own: Chromium's sandbox at work.
      const renderer = pids.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer'))!;
      expect(readFileSync(`/proc/${browser}/status`, 'utf8')).toMatch(/CapEff:\s*0+\n/);
      const ns = (pid: number, kind: string) => readlinkSync(`/proc/${pid}/ns/${kind}`);
      expect(ns(renderer, 'net')).not.toBe(ns(browser, 'net'));
    }
    expect(uids.size).toBe(2);
    expect(uids.has(0)).toBe(false);
  });

  it('see none of the host\'s private files: the paths do not exist in the session', async () => {
    // The browser's own process: its renderers and zygotes sit in Chromium's sandbox, an empty root
    // of their own, and the list's order is the pids' (which wrap on a busy machine).
    const browser = (await browserProcesses(a, /chromium$/)).find((pid) => !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type='));
    expect(browser, 'the browser process of session a').toBeDefined();
    const seen = (path: string) => existsSync(`/proc/${browser}/root${path}`);
    expect(seen('/usr/bin')).toBe(true); // the system's programs, read-only
    for (const path of [secretFile, join(dataDir, 'engine.sqlite'), dataDir, root, b.dir, process.cwd(), '/root', '/home']) {
      expect(seen(path), path).toBe(false);
    }
    expect(seen('/session/profile')).toBe(true);
  });

  it('can write nowhere but its own /session, whose size is capped', async () => {
    const attempt = (path: string) => a.sandbox.run('sh', ['-c', `echo x > ${path}`], a.sandbox.env).then(() => 'written', () => 'refused');
    for (const path of ['/evil', '/usr/evil', '/etc/evil', '/run/remote-browser-kit/egress/evil', '/run/remote-browser-kit/shared/evil']) {
      expect(await attempt(path), path).toBe('refused');
    }
    expect(await attempt('/session/downloads/ok')).toBe('written');
    const disk = statfsSync(a.sandbox.hostPath('/session'));
    expect(disk.blocks * disk.bsize).toBe(DISK_MB * 1024 * 1024);
  });

  it('saves downloads into the session\'s downloads folder, nowhere else', async () => {
    await a.control!.evaluate(`(() => {
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob(['saved by the page'], { type: 'text/plain' }));
      link.download = 'saved.txt';
      document.body.append(link);
      link.click();
    })()`);
    const saved = a.sandbox.hostPath('/session/downloads/saved.txt');
    await waitFor(() => existsSync(saved), Boolean);
    expect(await readFile(saved, 'utf8')).toBe('saved by the page');
  });

  it('opens no developer tools for F12 or Ctrl+Shift+I', async () => {
    await x(a, 'xdotool', ['search', '--onlyvisible', '--class', 'chromium', 'windowactivate', '--sync']).catch(() => '');
    await x(a, 'xdotool', ['key', 'F12']);
    await x(a, 'xdotool', ['key', 'ctrl+shift+i']);
    await x(a, 'xdotool', ['key', 'ctrl+shift+j']);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await a.control!.targets()).filter((t) => t.url.startsWith('devtools://'))).toEqual([]);
    const windows = await x(a, 'xdotool', ['search', '--onlyvisible', '--name', 'DevTools']).catch(() => '');
    expect(windows.trim()).toBe('');
    // Chromium says "DevTools not allowed on this page" in a dialog: closed, as a person would, for the tests after.
    for (let i = 0; i < 3; i++) await x(a, 'xdotool', ['key', 'Escape']);
  });

  it('cannot be reached by another local user: display, DevTools and egress route', async () => {
    // The VNC socket (the engine reaches it through the session's namespace).
    expect((await asNobody('socat', ['-u', `UNIX-CONNECT:${a.display.rfbSocketPath}`, 'OPEN:/dev/null'])).code).not.toBe(0);
    // The egress route's socket.
    expect((await asNobody('socat', ['-u', `UNIX-CONNECT:${join(a.dir, 'egress', 'egress.sock')}`, 'OPEN:/dev/null'])).code).not.toBe(0);
    // The X display.
    expect((await asNobody('xdotool', ['getmouselocation'], { DISPLAY: `:${a.display.number}` })).code).not.toBe(0);
    // DevTools listens on the session's own loopback: on the host's, nothing answers at that port.
    const [port] = (await readFile(a.sandbox.hostPath('/session/profile/DevToolsActivePort'), 'utf8')).split('\n');
    const reached = await new Promise<boolean>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    expect(reached).toBe(false);
  });

  it('sends no WebRTC packet around the egress route (STUN and TURN over UDP to loopback)', async () => {
    const listener = dgram.createSocket('udp4');
    let packets = 0;
    listener.on('message', () => packets++);
    await new Promise<void>((resolve) => listener.bind(0, '127.0.0.1', resolve));
    const { port } = listener.address();
    try {
      const candidates = await a.control!.evaluate(`(async () => {
        const pc = new RTCPeerConnection({ iceServers: [
          { urls: 'stun:127.0.0.1:${port}' },
          { urls: 'turn:127.0.0.1:${port}?transport=udp', username: 'u', credential: 'p' },
        ] });
        const found = [];
        pc.onicecandidate = (event) => event.candidate && found.push(event.candidate.candidate);
        pc.createDataChannel('probe');
        await pc.setLocalDescription(await pc.createOffer());
        await new Promise((resolve) => setTimeout(resolve, 3000));
        pc.close();
        return found;
      })()`);
      expect(Array.isArray(candidates)).toBe(true);
      expect(packets).toBe(0);
    } finally {
      listener.close();
    }
  });

  it('shows every viewer a neutral desktop name', async () => {
    expect(await desktopName(a.display.connect())).toBe('Remote browser');
  });

  it('holds a page that burns every core to its CPU cap (one core here)', async () => {
    const before = b.sandbox.cpuThrottled();
    // Three workers burn for 2 s at a time until the kernel holds the session at its cap. On a
    // machine busy with other work the session's fair share can stay under one core for a while,
    // and only a period in which it used its whole core is throttled: it burns again until then.
    const deadline = Date.now() + 60_000;
    do {
      await b.control!.evaluate(`(async () => {
        const source = 'const end = Date.now() + 2000; while (Date.now() < end) {} postMessage(1)';
        const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
        await Promise.all([0, 1, 2].map(() => new Promise((resolve) => { const w = new Worker(url); w.onmessage = () => { w.terminate(); resolve(); }; })));
      })()`);
    } while (b.sandbox.cpuThrottled() === before && Date.now() < deadline);
    expect(b.sandbox.cpuThrottled()).toBeGreaterThan(before);
  }, 90_000);

  it('ends a page that allocates memory without end at the cap; the host and the other session keep working', async () => {
    void a.control!.evaluate(`(() => {
      window.hoard = [];
      setInterval(() => { for (let i = 0; i < 8; i++) window.hoard.push(new Uint8Array(32 * 1024 * 1024).fill(7)); }, 20);
    })()`).catch(() => undefined);
    const crashed = await waitFor(
      () => events.find((e) => e.sessionId === a.id && (e.kind === 'page-crashed' || e.kind === 'browser-exited')),
      (e) => e !== undefined,
      30_000,
    );
    // The kernel ended the page at the session's cap, and the event says why.
    expect(a.sandbox.oomKills()).toBeGreaterThan(0);
    expect(crashed!.message).toMatch(new RegExp(`memory limit \\(${MEMORY_MB} MB\\)`));
    expect(await b.control!.evaluate('document.title')).toBe('Plain page');
  });

  it('refuses writes past the disk cap: a page cannot fill the host\'s disk', async () => {
    const result = (await b.control!.evaluate(`(async () => {
      const quota = (await navigator.storage.estimate()).quota;
      const dir = await navigator.storage.getDirectory();
      const file = await dir.getFileHandle('fill', { create: true });
      const writable = await file.createWritable();
      const chunk = new Uint8Array(8 * 1024 * 1024).fill(1);
      let written = 0;
      let refused = '';
      try {
        while (written < ${DISK_MB * 2} * 1024 * 1024) { await writable.write(chunk); written += chunk.length; }
        await writable.close();
      } catch (error) { refused = String(error && error.name); }
      return { quota, written, refused };
    })()`)) as { quota: number; written: number; refused: string };
    expect(result.refused).not.toBe('');
    expect(result.written).toBeLessThanOrEqual(DISK_MB * 1024 * 1024);
    // The session still works after its disk filled up.
    expect(await b.control!.evaluate('1 + 1')).toBe(2);
  });

  it('leads the engine nowhere through a link left in its directory (its display socket swapped for a host socket)', async () => {
    // A host socket in a root-only directory: what the engine, as root, could reach.
    const hostDir = join(dataDir, 'host-only');
    await mkdir(hostDir, { mode: 0o700 });
    const hostSocket = join(hostDir, 'service.sock');
    let reached = 0;
    const service = net.createServer((socket) => {
      reached++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => service.listen(hostSocket, resolve));
    try {
      // As the session (what code running in its browser could do): the display socket becomes a link.
      // (One program, in its own process: the exec guard lets no program of the session start another.)
      await a.sandbox.run('perl', ['-e', 'unlink "/session/rfb.sock"; symlink($ARGV[0], "/session/rfb.sock") or die "$!"', hostSocket], a.sandbox.env);
      // A viewer joins: the engine opens the display from inside the session, where the link leads nowhere.
      const viewer = a.display.connect();
      viewer.on('error', () => undefined);
      viewer.write('RFB 003.008\n');
      await new Promise((resolve) => viewer.once('close', resolve));
      expect(reached).toBe(0);
    } finally {
      await new Promise((resolve) => service.close(resolve));
    }
  });
});

describe('a confined Firefox ESR session, used like a person would', () => {
  it('runs as its own uid, sees no host secret, and refuses file: typed into its address bar', async () => {
    const session = await runtime.startSession({ browser: 'firefox-esr', url: `${origin}/ff`, language: 'en', layout: 'us' });
    try {
      const pids = await browserProcesses(session, /firefox-esr$/);
      expect(pids.length).toBeGreaterThan(0);
      for (const pid of pids) expect(status(pid, 'Uid').split(/\s+/)[0]).toBe(String(session.sandbox.uid));
      // What file:, jar:file: and resource: addresses, dialogs and downloads can reach is this view:
      // the host's secrets, the engine's database and other sessions are not in it.
      for (const path of [secretFile, join(dataDir, 'engine.sqlite'), root]) expect(existsSync(`/proc/${pids[0]}/root${path}`), path).toBe(false);
      const title = () => x(session, 'xdotool', ['search', '--onlyvisible', '--classname', 'Navigator', 'getwindowname']).catch(() => '');
      expect(await waitFor(title, (value) => value.includes('Plain page'), 20_000)).toContain('Plain page');
      const visit = (address: string) => typeAddress(session, address);
      // Firefox shows "Problem loading page" for a moment before its refusal page.
      await visit('file:///etc/passwd');
      expect(await waitFor(title, (value) => /^(Blocked Page|passwd|Index of)/.test(value))).toMatch(/^Blocked Page/);
    } finally {
      await runtime.stopSession(session.id);
    }
  });
});

describe('a host where sessions cannot be confined (an engine that is not root)', () => {
  /**
   * Starts `serve` as an ordinary user (uid 65534 in a user namespace of its own, so that it can
   * still read this checkout wherever it is); resolves with its output once it listens or exits.
   */
  function serveAsNobody(configFile?: string): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      const args = ['--user', '--map-user=65534', '--map-group=65534', '--', process.execPath, '--import', 'tsx', 'src/engine/cli.ts', 'serve', '--port', '0', '--data', join(nobodyDir, 'data')];
      if (configFile) args.push('--config', configFile);
      const child = spawn('unshare', args, { env: { PATH: process.env.PATH, HOME: nobodyDir }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const collect = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('listening on')) child.kill('SIGTERM');
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
  }

  let nobodyDir: string;
  beforeAll(async () => {
    nobodyDir = await mkdtemp(join(tmpdir(), 'rbk-nobody-'));
  });
  afterAll(async () => {
    await rm(nobodyDir, { recursive: true, force: true });
  });

  it('refuses to start, saying what is missing and how an operator opts out', async () => {
    const { code, output } = await serveAsNobody();
    expect(code).toBe(1);
    expect(output).toContain('sessions cannot be confined on this host');
    expect(output).toMatch(/root/);
    expect(output).toContain('insecure.unconfined');
    expect(output).not.toContain('listening on');
  });

  it('starts with insecure.unconfined, and says loudly what that means', async () => {
    const config = join(nobodyDir, 'engine.json');
    await writeFile(config, JSON.stringify({ insecure: { unconfined: true } }), { mode: 0o644 });
    const { output } = await serveAsNobody(config);
    expect(output).toContain('INSECURE');
    expect(output).toContain('anyone holding a share link');
    expect(output).toContain('listening on');
  });
});
