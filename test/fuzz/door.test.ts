// The generic door fuzz (issue 43): every channel the engine registers, reached with every credential
// that opens it (the share link, the view-only link, an automation address), gets the same hostile
// WebSockets: a message over its declared limit (whole, in fragments, or only announced), frames
// that are compressed, unmasked, of a reserved opcode, invalid UTF-8, a continuation with no start,
// an oversized or fragmented control frame, a bad close code, random bytes, a ping flood from a
// peer that never reads, a half-closed and a silent socket. The list of channels is the engine's
// own (its `channels` fact, the registry's order): a channel registered later is covered without a
// line here. The engine runs as a real child process with one running session; after every case it
// must still be alive and answer /healthz, the connection must have been ended by the engine, and
// at the end the sessions (Chromium, and Firefox ESR for BiDi) still run. Replay a failure of the random part with FUZZ_SEED=<seed>.
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useEngine } from '../api/context.js';
import { PLANS, send, sessionStatus, testConfig, waitForStatus, type Api } from '../api/harness.js';
import { fuzz, runs, Tally } from './fuzz.js';

/** The door's limits in this engine: a small buffer and a quick heartbeat, so that floods and silence are cut soon. */
const DOOR = { bufferMb: 1, heartbeatSeconds: 2 };
const ctx = useEngine({ config: testConfig({ door: DOOR }) });
const tally = new Tally();
const startedAt = Date.now();

interface Registered {
  name: string;
  opensWith: string[];
  messageBytes: number;
}

/** One way into one channel: its name, the credential, and the request path that opens it. */
interface Entrance {
  channel: Registered;
  credential: string;
  path: () => Promise<string>;
}

let api: Api;
let vmId: string;
/** A Firefox ESR session: the automation channel carries WebDriver BiDi there (issue 45), another way through it. */
let firefoxId: string;
const entrances: Entrance[] = [];

// ---------------------------------------------------------------------------------------------
// A raw WebSocket client: exact frames, no checks of its own

const OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

interface FrameOptions {
  opcode: number;
  payload?: Buffer;
  fin?: boolean;
  rsv1?: boolean;
  masked?: boolean;
  /** The length the header announces, when it is not the payload's (a message announced, not sent). */
  announced?: bigint;
}

function frame({ opcode, payload = Buffer.alloc(0), fin = true, rsv1 = false, masked = true, announced }: FrameOptions): Buffer {
  const length = announced ?? BigInt(payload.length);
  const head: number[] = [(fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode];
  const maskBit = masked ? 0x80 : 0;
  if (length < 126n) head.push(maskBit | Number(length));
  else if (length < 65_536n) head.push(maskBit | 126, Number(length >> 8n) & 0xff, Number(length) & 0xff);
  else {
    head.push(maskBit | 127);
    for (let shift = 56n; shift >= 0n; shift -= 8n) head.push(Number((length >> shift) & 0xffn));
  }
  if (!masked) return Buffer.concat([Buffer.from(head), payload]);
  const mask = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i]! ^= mask[i % 4]!;
  return Buffer.concat([Buffer.from(head), mask, body]);
}

interface RawSocket {
  socket: Socket;
  /** The HTTP status of the upgrade's answer (101 when it opened). */
  status: number;
  /** Resolves once the engine has ended the connection (or the client gave up on it). */
  ended: Promise<void>;
  isEnded(): boolean;
}

/** Opens a WebSocket to `path` with exact bytes; answers once the engine answered the upgrade. */
function openRaw(path: string, options: { read?: boolean } = {}): Promise<RawSocket> {
  const { hostname, port } = new URL(ctx.engine.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let head = Buffer.alloc(0);
    let answered = false;
    let ended = false;
    let endedNow: () => void = () => undefined;
    const endedPromise = new Promise<void>((done) => (endedNow = done));
    const end = () => {
      ended = true;
      endedNow();
    };
    socket.on('close', end);
    socket.on('end', end);
    socket.on('error', end);
    const timer = setTimeout(() => reject(new Error(`no answer to the upgrade of ${path} within 15 s`)), 15_000);
    socket.on('connect', () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`),
    );
    socket.on('data', (chunk: Buffer) => {
      if (answered) return;
      head = Buffer.concat([head, chunk]);
      const cut = head.indexOf('\r\n\r\n');
      if (cut < 0) return;
      answered = true;
      clearTimeout(timer);
      // A peer that does not read stops reading here (what the engine sends then piles up toward it).
      if (options.read === false) socket.pause();
      resolve({ socket, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head.toString('latin1'))?.[1] ?? 0), ended: endedPromise, isEnded: () => ended });
    });
    socket.on('close', () => {
      if (!answered) {
        clearTimeout(timer);
        resolve({ socket, status: 0, ended: endedPromise, isEnded: () => true });
      }
    });
  });
}

/** Writes `bytes` unless the engine has ended the connection; a write to a closed socket is not the engine's failure. */
function write(raw: RawSocket, bytes: Buffer): Promise<void> {
  if (raw.isEnded() || raw.socket.destroyed) return Promise.resolve();
  return new Promise((resolve) => raw.socket.write(bytes, () => resolve()));
}

/** Resolves true once the engine ended the connection, false after `ms`. */
async function endedWithin(raw: RawSocket, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const result = await Promise.race([raw.ended.then(() => true as const), gaveUp]);
  clearTimeout(timer);
  return result;
}

/** The engine is alive and its /healthz answers. */
async function expectAlive(after: string): Promise<void> {
  expect(ctx.engine.alive(), `the engine exited after ${after}:\n${ctx.engine.output().slice(-4000)}`).toBe(true);
  const health = await send(ctx.engine.url, 'GET', '/healthz', { timeoutMs: 10_000 });
  expect(health.json?.status, `/healthz after ${after}`).toBe('ok');
}

// ---------------------------------------------------------------------------------------------
// The cases: what each sends once the WebSocket is open

interface Case {
  name: string;
  /** Sends the case's bytes on an open WebSocket of `channel`. */
  send(raw: RawSocket, channel: Registered): Promise<void>;
  /** Whether the engine must end the connection afterwards (a frame the protocol forbids, or a message over the limit). */
  endsIt: boolean;
}

const over = (channel: Registered) => channel.messageBytes + 1;

const CASES: Case[] = [
  {
    name: 'one message over the channel\'s limit',
    endsIt: true,
    send: (raw, channel) => write(raw, frame({ opcode: OPCODE.binary, payload: randomBytes(over(channel)) })),
  },
  {
    name: 'one text message over the limit, in fragments',
    endsIt: true,
    send: async (raw, channel) => {
      const piece = Math.ceil(over(channel) / 4);
      for (let i = 0; i < 4; i++) {
        await write(raw, frame({ opcode: i === 0 ? OPCODE.text : OPCODE.continuation, fin: i === 3, payload: Buffer.alloc(piece, 0x61) }));
      }
    },
  },
  {
    name: 'a message announced at 2^62 bytes',
    endsIt: true,
    send: (raw) => write(raw, frame({ opcode: OPCODE.binary, announced: 1n << 62n })),
  },
  { name: 'a compressed frame (RSV1)', endsIt: true, send: (raw) => write(raw, frame({ opcode: OPCODE.text, rsv1: true, payload: Buffer.from('{"type":"hello"}') })) },
  { name: 'an unmasked frame', endsIt: true, send: (raw) => write(raw, frame({ opcode: OPCODE.text, masked: false, payload: Buffer.from('{}') })) },
  { name: 'a reserved opcode', endsIt: true, send: (raw) => write(raw, frame({ opcode: 3, payload: Buffer.from('x') })) },
  { name: 'text that is not UTF-8', endsIt: true, send: (raw) => write(raw, frame({ opcode: OPCODE.text, payload: Buffer.from([0x7b, 0xff, 0xfe, 0xc0, 0xaf, 0x7d]) })) },
  { name: 'a continuation with no start', endsIt: true, send: (raw) => write(raw, frame({ opcode: OPCODE.continuation, payload: Buffer.from('x') })) },
  { name: 'a ping of 126 bytes', endsIt: true, send: (raw) => write(raw, frame({ opcode: OPCODE.ping, payload: Buffer.alloc(126) })) },
  { name: 'a fragmented ping', endsIt: true, send: (raw) => write(raw, frame({ opcode: OPCODE.ping, fin: false, payload: Buffer.from('x') })) },
  { name: 'a close with code 999', endsIt: true, send: (raw) => write(raw, frame({ opcode: OPCODE.close, payload: Buffer.from([0x03, 0xe7]) })) },
  { name: 'a new message inside a fragmented one', endsIt: true, send: async (raw) => {
    await write(raw, frame({ opcode: OPCODE.binary, fin: false, payload: Buffer.from('a') }));
    await write(raw, frame({ opcode: OPCODE.binary, payload: Buffer.from('b') }));
  } },
  {
    name: 'a half-closed socket (the peer sent its FIN)',
    endsIt: true,
    send: async (raw) => void raw.socket.end(),
  },
];

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  const registered = ctx.engine.facts.channels as Registered[] | undefined;
  expect(registered, 'the engine tells its channels (the `channels` fact)').toBeInstanceOf(Array);
  const account = await ctx.account([PLANS.basic]);
  api = account.api;
  const created = await api.create({ browser: 'chromium', url: ctx.pages.page });
  expect(created.json?.status, created.text).toBe('ok');
  vmId = created.json.vmId;
  ctx.track(api, vmId);
  const firefox = await api.create({ browser: 'firefox-esr', url: ctx.pages.page, automation: true });
  expect(firefox.json?.status, firefox.text).toBe('ok');
  firefoxId = firefox.json.vmId;
  ctx.track(api, firefoxId);
  expect(await waitForStatus(api, vmId, ['running'], 45_000)).toBe('running');
  expect(await waitForStatus(api, firefoxId, ['running'], 60_000)).toBe('running');
  const linkId = new URL(created.json.shareUrl).search.slice(1);
  const viewOnly = await send(ctx.engine.url, 'POST', `/share/${linkId}/view-only`);
  expect(viewOnly.json?.status, viewOnly.text).toBe('ok');
  const viewLinkId = viewOnly.json.linkId as string;
  for (const channel of registered!) {
    for (const credential of channel.opensWith) {
      if (credential === 'share-link') entrances.push({ channel, credential, path: async () => `/share/${linkId}/${channel.name}` });
      else if (credential === 'view-link') entrances.push({ channel, credential, path: async () => `/share/${viewLinkId}/${channel.name}` });
      else if (credential === 'api-key' && channel.name === 'automation') {
        // DevTools (Chromium) and WebDriver BiDi (Firefox ESR) through the same channel.
        for (const [id, field] of [[vmId, 'browserWSEndpoint'], [firefoxId, 'webDriverBiDiEndpoint']] as const) {
          entrances.push({
            channel,
            credential: field === 'browserWSEndpoint' ? credential : `${credential}, BiDi`,
            // A fresh address each time, on this engine (the answer names the configured share base).
            path: async () => {
              const answer = await api.get(`/v8/vm/automation?id=${id}`);
              expect(answer.json?.status, answer.text).toBe('ok');
              const address = new URL(answer.json[field] as string);
              return address.pathname;
            },
          });
        }
      } else throw new Error(`channel "${channel.name}" opens with "${credential}": this test knows no way in for it; add one here`);
    }
  }
}, 120_000);

afterAll(() => tally.print('door.test.ts', startedAt));

describe('the door, for every registered channel and every credential that opens it', () => {
  it('lists the engine\'s channels, the people channel and the view-only link among them', () => {
    const names = entrances.map((entrance) => `${entrance.channel.name} ${entrance.credential}`);
    expect(names).toContain('people view-link');
    expect(names).toContain('rfb view-link');
    expect(names).toContain('automation api-key');
    expect(names).toContain('automation api-key, BiDi');
  });

  it('ends the connection for each hostile frame, and the engine lives on', async () => {
    for (const entrance of entrances) {
      for (const hostile of CASES) {
        const what = `${hostile.name} on ${entrance.channel.name} (${entrance.credential})`;
        const raw = await openRaw(await entrance.path());
        expect(raw.status, `the upgrade for ${what}`).toBe(101);
        await hostile.send(raw, entrance.channel);
        tally.add(hostile.name);
        if (hostile.endsIt) expect(await endedWithin(raw, 15_000), `the engine ends the connection after ${what}`).toBe(true);
        raw.socket.destroy();
        await expectAlive(what);
      }
    }
  }, 600_000);

  it('cuts off a ping flood from a peer that does not read', async () => {
    for (const entrance of entrances) {
      const what = `a ping flood on ${entrance.channel.name} (${entrance.credential})`;
      const raw = await openRaw(await entrance.path(), { read: false });
      expect(raw.status, `the upgrade for ${what}`).toBe(101);
      // The pongs it never reads exceed the door's buffer once the kernel's buffers are full too.
      const ping = frame({ opcode: OPCODE.ping, payload: Buffer.alloc(125, 0x70) });
      const batch = Buffer.concat(Array.from({ length: 2000 }, () => ping));
      const ceiling = (DOOR.bufferMb + 40) * 1024 * 1024;
      let sent = 0;
      while (!raw.isEnded() && sent < ceiling) {
        await write(raw, batch);
        sent += batch.length;
      }
      tally.add('ping flood', Math.round(sent / ping.length));
      // Reading again takes in what the engine queued, then its close (a paused socket hears no end).
      raw.socket.resume();
      expect(await endedWithin(raw, 15_000), `the engine cuts off ${what} (${(sent / 1024 / 1024).toFixed(1)} MB of pings sent)`).toBe(true);
      raw.socket.destroy();
      await expectAlive(what);
    }
  }, 600_000);

  it('cuts off a silent peer after a heartbeat, on every channel at once', async () => {
    const silent = await Promise.all(entrances.map(async (entrance) => ({ entrance, raw: await openRaw(await entrance.path()) })));
    for (const { entrance, raw } of silent) expect(raw.status, `${entrance.channel.name} (${entrance.credential})`).toBe(101);
    // Each is pinged, never answers, and is cut at the next heartbeat (or closed sooner by its channel).
    const cut = await Promise.all(silent.map(({ raw }) => endedWithin(raw, 10 * DOOR.heartbeatSeconds * 1000)));
    silent.forEach(({ entrance, raw }, index) => {
      expect(cut[index], `a silent peer on ${entrance.channel.name} (${entrance.credential}) is cut off`).toBe(true);
      raw.socket.destroy();
    });
    tally.add('silent peer', silent.length);
    await expectAlive('silent peers on every channel');
  }, 120_000);

  it('survives random bytes after the upgrade on every channel', async () => {
    const junk = fc.tuple(fc.nat({ max: entrances.length - 1 }), fc.uint8Array({ minLength: 1, maxLength: 512 }));
    await fuzz('random bytes after the upgrade', 40, junk, runs(3 * entrances.length), async ([index, bytes]) => {
      const entrance = entrances[index]!;
      const raw = await openRaw(await entrance.path());
      await write(raw, Buffer.from(bytes));
      await endedWithin(raw, 200);
      raw.socket.destroy();
      tally.add('random bytes');
      await expectAlive(`${bytes.length} random bytes on ${entrance.channel.name} (${entrance.credential})`);
    });
  }, 600_000);

  it('leaves the sessions running for their people afterwards', async () => {
    expect(await sessionStatus(api, vmId)).toBe('running');
    expect(await sessionStatus(api, firefoxId)).toBe('running');
  });
});
