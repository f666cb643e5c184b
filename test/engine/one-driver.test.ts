// One driver at a time (issue 36) through a real engine, Chromium and Xvnc: three viewers of a
// session created with `control: "one"`, each a raw RFB client with its `people` socket (no viewer
// library between). Only the driver's keys reach the page (read back through DevTools); a second
// asks, the driver gives, the new driver's keys reach it and the old one's do not; the owner takes
// it back through the API; every viewer and the share state are told who drives. A program on
// DevTools drives when it attaches, hands control to a person and takes it back, both sides told.
// What a driver holds down (Shift, button 1) goes up when control passes or its connection closes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import type { BrowserControl } from '../../src/engine/runtime/browser/control.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import { connectPeople, type PeopleClient } from '../helpers/people-client.js';
import { connectRfb, type RfbClient } from '../helpers/rfb-client.js';
import { waitFor } from '../helpers/session.js';
import { WebSocket } from 'ws';

const PAGE = `<!doctype html><title>Keys</title><body style="margin:0;background:#336699">
<input id="field" autofocus style="position:absolute;left:10px;top:10px;width:280px;height:40px">
<script>
window.seen = [];
addEventListener('pointerdown', (e) => seen.push({ type: 'down', shift: e.shiftKey, x: e.clientX, buttons: e.buttons }), true);
addEventListener('pointermove', (e) => seen.push({ type: 'move', shift: e.shiftKey, x: e.clientX, buttons: e.buttons }), true);
addEventListener('pointerup', (e) => seen.push({ type: 'up', shift: e.shiftKey, x: e.clientX, buttons: e.buttons }), true);
</script></body>`;

const XK = { a: 0x61, b: 0x62, c: 0x63, d: 0x64, e: 0x65, f: 0x66, g: 0x67, Shift_L: 0xffe1 };

let fixture: EngineFixture;
let engine: Engine;
let vmId: string;
let linkId: string;
let control: BrowserControl;
let chromeHeight: number;

interface Viewer {
  people: PeopleClient;
  rfb: RfbClient;
  id: string;
}
const viewers: Viewer[] = [];

const fieldValue = async () => String(await control.evaluate("document.getElementById('field').value"));
const clearField = () => control.evaluate("document.getElementById('field').value = ''");
const shareState = async () => (await (await fetch(`${engine.url}/share/${linkId}`)).json()) as Record<string, any>;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pointer events the page saw since the last `forgetPointer()`. */
type PointerSeen = { type: 'down' | 'move' | 'up'; shift: boolean; x: number; buttons: number };
const pointerSeen = async () => (await control.evaluate('window.seen')) as PointerSeen[];
const forgetPointer = () => control.evaluate('window.seen = []');
/** A key as noVNC sends it (the viewers announce QEMU key events): its keysym and its XT keycode, which Xvnc types as it is. */
const qemuKey = (down: boolean, keysym: number, keycode: number) => {
  const event = Buffer.alloc(12);
  event.writeUInt8(255, 0);
  event.writeUInt16BE(down ? 1 : 0, 2);
  event.writeUInt32BE(keysym, 4);
  event.writeUInt32BE(keycode, 8);
  return event;
};
const XT = { f: 0x21, Shift_L: 0x2a };
const pointerEvent = (buttons: number, x: number, y: number) => Buffer.from([5, buttons, x >> 8, x & 0xff, y >> 8, y & 0xff]);

/**
 * `holder` presses Shift and button 1 in the field and lets go of neither; resolves once the page
 * saw the press with Shift.
 */
async function holdShiftAndButton(holder: Viewer): Promise<void> {
  await clearField();
  await forgetPointer();
  holder.rfb.send(qemuKey(true, XK.Shift_L, XT.Shift_L));
  holder.rfb.send(pointerEvent(1, 100, chromeHeight + 30));
  const seen = await waitFor(pointerSeen, (events) => events.some((e) => e.type === 'down' && e.shift), 10_000);
  expect(seen.find((e) => e.type === 'down')).toMatchObject({ shift: true, x: 100, buttons: 1 });
}

/**
 * `typist` moves the pointer away, clicks in the field and types `f`: the move drags nothing, the
 * click comes without Shift, and the page gets `f`.
 */
async function drivesFreely(typist: Viewer): Promise<void> {
  typist.rfb.send(pointerEvent(0, 220, chromeHeight + 150));
  const moved = await waitFor(pointerSeen, (events) => events.some((e) => e.type === 'move' && e.x === 220), 10_000);
  expect(moved.find((e) => e.type === 'move' && e.x === 220)).toMatchObject({ shift: false, buttons: 0 });
  await typist.rfb.click(120, chromeHeight + 30);
  const clicked = await waitFor(pointerSeen, (events) => events.some((e) => e.type === 'down' && e.x === 120), 10_000);
  expect(clicked.find((e) => e.type === 'down' && e.x === 120)).toMatchObject({ shift: false, buttons: 1 });
  typist.rfb.send(qemuKey(true, XK.f, XT.f));
  typist.rfb.send(qemuKey(false, XK.f, XT.f));
  expect(await waitFor(fieldValue, (value) => value !== '', 10_000)).toBe('f');
}

async function join(): Promise<Viewer> {
  const ws = engine.url.replace(/^http/, 'ws');
  const people = await connectPeople(`${ws}/share/${linkId}/people`);
  const rfb = await connectRfb(`${ws}/share/${linkId}/rfb?viewer=${people.viewerKey}`);
  const picture = await people.until((p) => p.people.some((person) => person.id === p.you));
  const viewer = { people, rfb, id: picture.you };
  viewers.push(viewer);
  return viewer;
}

/** Keys sent by `others` before `driver`'s marker key: only the driver's reach the field. */
async function onlyDriverTypes(driver: Viewer, others: Viewer[], key: number, marker: string): Promise<void> {
  await clearField();
  for (const other of others) await other.rfb.key(XK.g);
  await driver.rfb.key(key);
  expect(await waitFor(fieldValue, (value) => value.includes(marker), 10_000)).toContain(marker);
  // The others' keys went out first, on connections of their own: a while longer proves they were held back.
  await pause(500);
  expect(await fieldValue()).toBe(marker);
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'one-driver', site: PAGE, config: { control: { idleSeconds: 3 } } });
  engine = fixture.engine;
  const created = await fixture.call('/vm/create', { browser: 'chromium', url: `${fixture.site.origin}/`, control: 'one' });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  linkId = new URL(created.shareUrl).search.slice(1);
  expect(await waitFor(async () => (await fixture.call(`/vm/data?id=${vmId}`)).data?.[0]?.status, (status) => status === 'running', 60_000)).toBe('running');
  const row = (await engine.store.session(vmId))!;
  control = engine.runtime.get(row.runtime_id!)!.control!;
  expect(await waitFor(() => control.evaluate('document.title').catch(() => ''), (title) => title === 'Keys', 15_000)).toBe('Keys');
  chromeHeight = Number(await control.evaluate('outerHeight - innerHeight'));
}, 120_000);

afterAll(async () => {
  for (const viewer of viewers) {
    viewer.rfb.close();
    viewer.people.close();
  }
  await fixture?.close();
});

describe('a session with one driver', () => {
  it('refuses an unknown control mode at create, naming the field, and starts nothing', async () => {
    const refused = await fixture.call('/vm/create', { browser: 'chromium', control: 'everyone' });
    expect(refused).toMatchObject({ status: 'denied', message: expect.stringContaining('control:') });
  });

  it('says so in the share state, with nobody driving before anyone pressed', async () => {
    expect(await shareState()).toMatchObject({ status: 'ok', state: 'running', controlMode: 'one', driver: null, channels: { people: true } });
  });

  it('passes only the driver\'s keys; a second asks, the driver gives, and the keys follow the new driver', async () => {
    const [first, second, third] = [await join(), await join(), await join()];
    for (const viewer of [first, second, third]) await viewer.people.until((p) => p.people.length === 3 && p.driver === null);
    // Nobody drives: the first to press takes it.
    await first.rfb.click(100, chromeHeight + 30);
    for (const viewer of [first, second, third]) await viewer.people.until((p) => p.driver?.id === first.id);
    expect((await waitFor(shareState, (state) => state.driver?.id === first.id)).driver).toMatchObject({ id: first.id, kind: 'person', guest: 1 });
    await onlyDriverTypes(first, [second, third], XK.a, 'a');

    // The second asks: the driver sees it waiting, and gives.
    second.people.send({ type: 'ask' });
    await first.people.until((p) => p.people.find((person) => person.id === second.id)?.asks === true);
    // A viewer that does not drive cannot give.
    third.people.send({ type: 'give', to: third.id });
    await waitFor(() => third.people.refusals, (refusals) => refusals.some((message) => message.includes('only the driver')));
    first.people.send({ type: 'give', to: second.id });
    for (const viewer of [first, second, third]) await viewer.people.until((p) => p.driver?.id === second.id);
    await waitFor(shareState, (state) => state.driver?.id === second.id);
    await onlyDriverTypes(second, [first, third], XK.b, 'b');

    // The owner takes it back (no viewer of theirs here: nobody types), then gives it to the third.
    const taken = await fixture.call('/vm/control', { id: vmId, action: 'take' });
    expect(taken).toMatchObject({ status: 'ok', mode: 'one', driver: { id: 'owner', owner: true } });
    for (const viewer of [first, second, third]) await viewer.people.until((p) => p.driver?.id === 'owner');
    await clearField();
    for (const viewer of [first, second, third]) await viewer.rfb.key(XK.c);
    await pause(700);
    expect(await fieldValue()).toBe('');
    expect(await fixture.call('/vm/control', { id: vmId, action: 'give', to: third.id })).toMatchObject({ status: 'ok', driver: { id: third.id } });
    await third.people.until((p) => p.driver?.id === third.id);
    await onlyDriverTypes(third, [first, second], XK.d, 'd');
  }, 90_000);

  it('passes control on to a waiting viewer once the driver is idle for the set time', async () => {
    const [, second, third] = viewers;
    second!.people.send({ type: 'ask' });
    await third!.people.until((p) => p.people.find((person) => person.id === second!.id)?.asks === true);
    // Three seconds of no input from the driver (the test's `control.idleSeconds`).
    const passed = await second!.people.until((p) => p.driver?.id === second!.id, 10_000);
    expect(passed.driver?.id).toBe(second!.id);
    await onlyDriverTypes(second!, [third!], XK.e, 'e');
  }, 30_000);

  it('tells the viewers where the driver\'s pointer is', async () => {
    const [first, second] = viewers;
    const before = first!.people.pointers.length;
    second!.rfb.send(Buffer.from([5, 0, 0, 123, 0, 45]));
    await waitFor(() => first!.people.pointers.slice(before), (seen) => seen.some((at) => at.x === 123 && at.y === 45));
  });

  it('names the owner\'s viewer with a pass from the API, and refuses bad requests without changing anything', async () => {
    const made = await fixture.call('/vm/viewer', { id: vmId, name: 'Ada Owner' });
    expect(made).toMatchObject({ status: 'ok', pass: expect.any(String) });
    const ws = engine.url.replace(/^http/, 'ws');
    const owner = await connectPeople(`${ws}/share/${linkId}/people`, { pass: made.pass as string });
    const named = await owner.until((p) => p.people.some((person) => person.id === p.you && person.name === 'Ada Owner' && person.owner === true));
    // The owner's viewer takes control itself.
    owner.send({ type: 'take' });
    await owner.until((p) => p.driver?.id === named.you && p.driver.name === 'Ada Owner');
    // A pass altered (or another session's) names nobody.
    const forged = await connectPeople(`${ws}/share/${linkId}/people`, { pass: `${(made.pass as string).slice(0, -2)}AA` });
    await waitFor(() => forged.refusals, (refusals) => refusals.some((message) => message.startsWith('pass:')));
    expect((await forged.until((p) => p.you !== '')).people.find((person) => person.id === forged.picture()!.you)).toMatchObject({ guest: expect.any(Number) });
    // A guest cannot take.
    forged.send({ type: 'take' });
    await waitFor(() => forged.refusals, (refusals) => refusals.some((message) => message.includes('owner')));
    for (const body of [{ id: vmId, action: 'steal' }, { id: vmId, action: 'give' }, { id: vmId, action: 'mode', mode: 'all' }, { id: 'f'.repeat(32), action: 'take' }, { id: vmId, name: 'x'.repeat(65) }]) {
      const path = 'name' in body ? '/vm/viewer' : '/vm/control';
      expect(await fixture.call(path, body)).toMatchObject({ status: 'denied', message: expect.stringMatching(/^(action|to|mode|id|name):/) });
    }
    expect((await shareState()).driver).toMatchObject({ name: 'Ada Owner' });
    owner.close();
    forged.close();
    // The owner's viewer left while driving: nobody drives (nobody waits).
    await waitFor(shareState, (state) => state.driver === null);
  }, 30_000);

  it('switches to everyone controlling, and back', async () => {
    expect(await fixture.call('/vm/control', { id: vmId, action: 'mode', mode: 'shared' })).toMatchObject({ status: 'ok', mode: 'shared', driver: null });
    const state = await waitFor(shareState, (s) => s.controlMode === undefined);
    expect(state.driver).toBeUndefined();
    const [first, second] = viewers;
    await clearField();
    await first!.rfb.key(XK.f);
    expect(await waitFor(fieldValue, (value) => value === 'f')).toBe('f');
    await second!.rfb.key(XK.f);
    expect(await waitFor(fieldValue, (value) => value === 'ff')).toBe('ff');
    expect(await fixture.call('/vm/control', { id: vmId, action: 'mode', mode: 'one' })).toMatchObject({ status: 'ok', mode: 'one', driver: null });
    expect(await waitFor(shareState, (s) => s.controlMode === 'one')).toMatchObject({ driver: null });
  });

  it('still knows a viewer of the former version by its key under the old names (hello `seat`, `?seat=`; decisions.md 149)', async () => {
    const ws = engine.url.replace(/^http/, 'ws');
    const people = await connectPeople(`${ws}/share/${linkId}/people`, { formerNames: true });
    const rfb = await connectRfb(`${ws}/share/${linkId}/rfb?seat=${people.viewerKey}`);
    const former = { people, rfb, id: (await people.until((p) => p.people.some((person) => person.id === p.you))).you };
    // The picture gives its key under both names, for one version.
    expect(people.picture()).toMatchObject({ viewerKey: people.viewerKey, seat: people.viewerKey });
    expect(await fixture.call('/vm/control', { id: vmId, action: 'give', to: former.id })).toMatchObject({ status: 'ok', driver: { id: former.id } });
    await people.until((p) => p.driver?.id === former.id);
    // Its RFB connection's keys count as the driver's: the key under `?seat=` named it.
    await onlyDriverTypes(former, [viewers[0]!], XK.a, 'a');
    rfb.close();
    people.close();
    await viewers[0]!.people.until((p) => p.driver === null && !p.people.some((person) => person.id === former.id));
  }, 30_000);
});

describe('a program on DevTools', () => {
  it('drives when it attaches, hands control to a person and takes it back, both sides told', async () => {
    const [first, second] = viewers;
    const address = await fixture.call(`/vm/automation?id=${vmId}`);
    expect(address.status).toBe('ok');
    const program = new WebSocket(address.browserWSEndpoint as string, { perMessageDeflate: false });
    const heard: Array<Record<string, any>> = [];
    program.on('message', (data: Buffer) => heard.push(JSON.parse(data.toString('utf8'))));
    await new Promise((resolve, reject) => program.once('open', resolve).once('error', reject));
    let nextId = 1;
    const command = async (method: string, params: Record<string, unknown> = {}) => {
      const id = nextId++;
      program.send(JSON.stringify({ id, method, params }));
      return (await waitFor(() => heard.find((message) => message.id === id), (message) => message !== undefined))!;
    };
    // Attached: it drives, and the people see a program drive.
    const program0 = await first!.people.until((p) => p.driver?.kind === 'program');
    expect((await command('RemoteBrowserKit.getControl')).result).toMatchObject({ mode: 'one', drives: true, driver: { kind: 'program', owner: true } });
    await clearField();
    await first!.rfb.key(XK.a);
    await pause(500);
    expect(await fieldValue()).toBe('');

    // It hands over to the first viewer, which is told, and so is the program (an event it waits for).
    expect((await command('RemoteBrowserKit.handOver', { to: first!.id })).result).toMatchObject({ drives: false, driver: { id: first!.id } });
    await waitFor(() => heard, (messages) => messages.some((m) => m.method === 'RemoteBrowserKit.controlChanged' && m.params.driver?.id === first!.id && m.params.drives === false));
    await first!.people.until((p) => p.driver?.id === first!.id);
    await onlyDriverTypes(first!, [second!], XK.b, 'b');
    // While a person drives, the program's input is refused with a DevTools error it reads.
    const refused = await command('Input.dispatchKeyEvent', { type: 'keyDown', text: 'z' });
    expect(refused.error.message).toContain('a person drives this session now');

    // It takes control back: both sides told; the person's keys stop.
    expect((await command('RemoteBrowserKit.takeControl')).result).toMatchObject({ drives: true });
    await first!.people.until((p) => p.driver?.id === program0.driver!.id);
    await waitFor(() => heard, (messages) => messages.some((m) => m.method === 'RemoteBrowserKit.controlChanged' && m.params.drives === true));
    await clearField();
    await first!.rfb.key(XK.c);
    await pause(500);
    expect(await fieldValue()).toBe('');
    program.close();
    // The program left while driving: nobody drives.
    await first!.people.until((p) => p.driver === null && !p.people.some((person) => person.kind === 'program'));
  }, 60_000);
});

describe('keys and buttons a viewer holds (issue 43, finding 5)', () => {
  it('go up when the owner gives control to another: the new driver\'s moves do not drag, its click and its f come without Shift', async () => {
    const [holder, next] = [await join(), await join()];
    expect(await fixture.call('/vm/control', { id: vmId, action: 'give', to: holder.id })).toMatchObject({ status: 'ok', driver: { id: holder.id } });
    await holder.people.until((p) => p.driver?.id === holder.id);
    await holdShiftAndButton(holder);
    expect(await fixture.call('/vm/control', { id: vmId, action: 'give', to: next.id })).toMatchObject({ status: 'ok', driver: { id: next.id } });
    await next.people.until((p) => p.driver?.id === next.id);
    // The holder's button goes up, without Shift, as control passes: the page sees it let go.
    // (Its release and the new driver's input travel on two connections; a person acts later.)
    const released = await waitFor(pointerSeen, (events) => events.some((e) => e.type === 'up'), 10_000);
    expect(released.find((e) => e.type === 'up')).toMatchObject({ shift: false, buttons: 0 });
    await drivesFreely(next);
  }, 60_000);

  it('go up when a viewer\'s connection closes, with everyone controlling', async () => {
    expect(await fixture.call('/vm/control', { id: vmId, action: 'mode', mode: 'shared' })).toMatchObject({ status: 'ok', mode: 'shared' });
    const [leaving, staying] = [await join(), await join()];
    await holdShiftAndButton(leaving);
    leaving.rfb.close();
    // Its button goes up as its connection closes, where it was: the page sees it let go.
    await waitFor(pointerSeen, (events) => events.some((e) => e.type === 'up'), 10_000);
    await drivesFreely(staying);
  }, 60_000);
});
