// A channel added with its folder and one registration line (issue 33): the test's `echo` channel
// (test/channels/echo/) registered through createEngine's `channels`, served by the real router,
// door and share API with no browser (the session is a row in the store: echo opens nothing inside
// it). It echoes over `/share/<link>/echo`, passes the door (the view-only link's seats apart from
// the share link's), says so in the share state's `channels`, and is refused (403) where it is not
// offered. Channels named as fields of the state (`control`, `viewers`, `driver`) are said under
// `channels` only and leave those fields as they are (decisions.md 150).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { VIEWER_CLOSE } from '../../src/engine/channels/close-codes.js';
import { DEFAULT_PLANS, parseEngineConfig } from '../../src/engine/config.js';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { insertLinkedSession } from '../helpers/linked-session.js';
import { ECHO_CLOSED_PLAN, ECHO_SEATS, echoChannel } from './echo/echo.js';

let engine: Engine;
let dir: string;
/** Channel names that are also fields of the share state. */
const NAMED_AS_FIELDS = ['control', 'viewers', 'driver'] as const;

/** A running session (a row: no browser) of a new account on `plan`; answers its share link's id. */
async function linkOf(plan: string): Promise<string> {
  const { account } = await engine.accounts.create({ contact: `${plan}@example.com`, plans: [plan] });
  const link = await insertLinkedSession(engine, { accountId: account.id, subscriptionId: account.subscriptions[0]!.id }, { status: 'running' });
  return new URL(link).search.slice(1);
}

/** Opens a link's echo channel (or another echo by its name): the open socket, or the HTTP status that refused it. */
function openEcho(linkId: string, name = 'echo'): Promise<{ socket: WebSocket; closed: Promise<number> } | { refused: number }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${engine.url.replace(/^http/, 'ws')}/share/${linkId}/${name}`);
    const closed = new Promise<number>((done) => socket.on('close', (code) => done(code)));
    socket.on('open', () => resolve({ socket, closed }));
    socket.on('unexpected-response', (_request, response) => resolve({ refused: response.statusCode ?? 0 }));
    socket.on('error', () => undefined);
  });
}

function opened(attempt: Awaited<ReturnType<typeof openEcho>>): { socket: WebSocket; closed: Promise<number> } {
  if (!('socket' in attempt)) throw new Error(`refused with ${attempt.refused}`);
  return attempt;
}

function echoOf(socket: WebSocket, text: string): Promise<string> {
  return new Promise((resolve) => {
    socket.once('message', (data: Buffer) => resolve(data.toString()));
    socket.send(text);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rbk-echo-channel-'));
  const plans = [...DEFAULT_PLANS, { ...DEFAULT_PLANS.find((plan) => plan.id === 'pro')!, id: ECHO_CLOSED_PLAN, name: 'Closed' }];
  // No warm pool: nothing of a session's runtime is started.
  const config = parseEngineConfig({ plans, warm: { memoryMb: 0, displays: 0 } });
  // Echoes named as fields of the share state, besides `echo` itself.
  engine = await createEngine({ dataDir: dir, port: 0, config, channels: [echoChannel(), ...NAMED_AS_FIELDS.map((name) => echoChannel(name))] });
});

afterAll(async () => {
  await engine?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a channel registered with one line (echo)', () => {
  it('echoes over the share link, and the share state says it is offered', async () => {
    const linkId = await linkOf('pro');
    const state = await (await fetch(`${engine.url}/share/${linkId}`)).json();
    expect(state).toMatchObject({ status: 'ok', state: 'running', control: true, channels: { echo: true } });
    // Only the channels the former viewers read are said at the top level too (decisions.md 150).
    expect(state).not.toHaveProperty('echo');
    const { socket, closed } = opened(await openEcho(linkId));
    expect(await echoOf(socket, 'hello')).toBe('hello');
    expect(await echoOf(socket, 'again')).toBe('again');
    socket.close();
    expect(await closed).toBe(1005);
  });

  it('answers a plain GET of its route with a pointer to the WebSocket', async () => {
    const linkId = await linkOf('pro');
    const answer = await fetch(`${engine.url}/share/${linkId}/echo`);
    expect(answer.status).toBe(405);
    expect(((await answer.json()) as { message: string }).message).toBe('use a WebSocket for /echo');
    // A name no channel has is no route at all.
    expect((await fetch(`${engine.url}/share/${linkId}/nothing`)).status).toBe(404);
  });

  it('passes the door: the view-only link has its own seats, the share link keeps its own', async () => {
    const linkId = await linkOf('pro');
    const made = await fetch(`${engine.url}/share/${linkId}/view-only`, { method: 'POST' });
    const viewLinkId = ((await made.json()) as { linkId: string }).linkId;
    expect(await (await fetch(`${engine.url}/share/${viewLinkId}`)).json()).toMatchObject({ control: false, channels: { echo: true } });
    const watchers = [];
    for (let i = 0; i < ECHO_SEATS.view; i++) watchers.push(opened(await openEcho(viewLinkId)));
    expect(await echoOf(watchers[0]!.socket, 'watching')).toBe('watching');
    // One more on the view-only link finds its seats taken.
    expect(await opened(await openEcho(viewLinkId)).closed).toBe(VIEWER_CLOSE.full.code);
    // The share link's seats are its own, whoever watches.
    const holders = [];
    for (let i = 0; i < ECHO_SEATS.control; i++) holders.push(opened(await openEcho(linkId)));
    expect(await echoOf(holders.at(-1)!.socket, 'holding')).toBe('holding');
    expect(await opened(await openEcho(linkId)).closed).toBe(VIEWER_CLOSE.full.code);
    // A seat given back is taken again (once the engine has seen the close: a few tries).
    watchers[0]!.socket.close();
    await watchers[0]!.closed;
    let again: WebSocket | undefined;
    for (let i = 0; i < 20 && !again; i++) {
      const attempt = opened(await openEcho(viewLinkId));
      const answer = await Promise.race([echoOf(attempt.socket, 'back'), attempt.closed.then(() => null)]);
      if (answer === 'back') again = attempt.socket;
    }
    expect(again).toBeDefined();
    for (const each of [...holders.map((holder) => holder.socket), again!]) each.close();
  });

  it('is refused (403) and left out of the state for a session it is not offered to', async () => {
    const linkId = await linkOf(ECHO_CLOSED_PLAN);
    const state = await (await fetch(`${engine.url}/share/${linkId}`)).json();
    expect(state).toMatchObject({ status: 'ok', state: 'running', channels: {} });
    expect(state.channels).not.toHaveProperty('echo');
    expect(await openEcho(linkId)).toEqual({ refused: 403 });
  });
});

describe('channels named as fields of the share state (decisions.md 150)', () => {
  it('are said under `channels` and cannot overwrite the fields: a view-only link still says it has no control', async () => {
    const linkId = await linkOf('pro');
    const made = await fetch(`${engine.url}/share/${linkId}/view-only`, { method: 'POST' });
    const viewLinkId = ((await made.json()) as { linkId: string }).linkId;
    for (const [link, control] of [[viewLinkId, false], [linkId, true]] as const) {
      const state = (await (await fetch(`${engine.url}/share/${link}`)).json()) as Record<string, unknown>;
      expect(state).toMatchObject({ status: 'ok', state: 'running', control, viewers: 0, channels: { echo: true, control: true, viewers: true, driver: true } });
      // Not one-driver: the state says no driver, whatever a channel is called.
      expect(state).not.toHaveProperty('driver');
    }
    // The event stream's first state says the same.
    const events = await fetch(`${engine.url}/share/${viewLinkId}/events`);
    const reader = events.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const first = JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as Record<string, unknown>;
    expect(first).toMatchObject({ state: 'running', control: false, viewers: 0, channels: { control: true } });
    // And the channel named `control` is a channel like any other.
    const { socket, closed } = opened(await openEcho(viewLinkId, 'control'));
    expect(await echoOf(socket, 'still a channel')).toBe('still a channel');
    socket.close();
    await closed;
  });
});
