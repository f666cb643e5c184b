// <SessionReplay> against the real proxy route (node adapter on loopback) in front of a real engine
// on the fake runtime: the recorder's part (its Matroska file and timeline) is played by a clip
// ffmpeg makes here, since jsdom plays no video (the end-to-end test plays a real session's
// recording in Chromium). Events listed with their times, a jump sets the video's place and is
// announced, speeds, labels and axe, the seven languages, a recording still being made, and the
// refusals (not recorded, removed, not found) said in words.
import { act, screen, waitFor, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARE_LANGUAGES } from '../../src/protocol/index.js';
import { resources } from '../../src/react/i18n.js';
import { SessionReplay } from '../../src/react/SessionReplay.js';
import { PLANS, startTestEngine, type TestEngine } from '../server/fixtures.js';
import { axeViolations } from './axe.js';
import { mountRoute, renderWithRoute, type MountedRoute } from './route-harness.js';

let t: TestEngine;
let route: MountedRoute;
let accountId: string;
const en = resources.en.replay;

/** A session started through the route: its handle, and (for a recorded one) the recorder's files written as the recorder would. */
async function session(record: boolean, timeline: Array<[number, object]> = []): Promise<{ handle: string; vmId: string; started: number }> {
  const before = new Set((await t.engine.store.recordedSessions(accountId)).map((row) => row.id));
  const created = (await (await fetch(`${route.endpoint}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ browser: 'chromium', record }) })).json()) as { handle: string };
  if (!record) return { handle: created.handle, vmId: '', started: Date.now() };
  const vmId = (await t.engine.store.recordedSessions(accountId)).find((row) => !before.has(row.id))!.id;
  const dir = t.engine.recordings.dirOf(vmId);
  mkdirSync(dir, { recursive: true });
  const media = join(dir, 'media.mkv');
  writeFileSync(media, execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=blue:s=160x120:r=10', '-t', '4', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-f', 'matroska', 'pipe:1']));
  // The recorder writes for as long as the session runs: its file was last written 4 s after it began.
  const started = statSync(media).birthtimeMs || Date.now();
  utimesSync(media, new Date(), new Date(started + 4000));
  writeFileSync(join(dir, 'timeline.jsonl'), timeline.map(([ms, fields]) => `${JSON.stringify({ time: new Date(started + ms).toISOString(), ...fields })}\n`).join(''));
  return { handle: created.handle, vmId, started };
}

/** Ends the session and marks its recording whole, as the recorder does when it closes. */
async function end(handle: string, vmId: string): Promise<void> {
  await fetch(`${route.endpoint}/sessions/${encodeURIComponent(handle)}`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
  await waitFor(async () => expect(['deleted', 'suspended']).toContain((await t.engine.store.session(vmId))?.status), { timeout: 10_000 });
  writeFileSync(join(t.engine.recordings.dirOf(vmId), 'media.mkv.closed'), '');
}

const TIMELINE: Array<[number, object]> = [
  [0, { type: 'navigation', tab: 't1', url: 'https://example.test/first', title: 'First' }],
  [800, { type: 'viewer-joined', channel: 'rfb', rights: 'control' }],
  [1500, { type: 'navigation', tab: 't1', url: 'https://example.test/second', title: 'Second' }],
  [2500, { type: 'refused', target: '169.254.169.254', category: 'link-local' }],
];

let ended: { handle: string; vmId: string; started: number };

beforeAll(async () => {
  t = await startTestEngine({ plans: PLANS.map((plan) => ({ ...plan, recording: true })) });
  const created = await t.key();
  accountId = created.accountId;
  route = await mountRoute(t.engine as never, created.key);
  ended = await session(true, TIMELINE);
  // The session ends after the last event on its timeline, as a real one would.
  await waitFor(() => expect(Date.now()).toBeGreaterThan(ended.started + 2600), { timeout: 5000, interval: 100 });
  await end(ended.handle, ended.vmId);
}, 60_000);

afterAll(async () => {
  await route?.close();
  await t?.close();
});

describe('<SessionReplay>', () => {
  it('lists the events with their times, labels every control, and passes axe', async () => {
    const { container } = renderWithRoute(<SessionReplay handle={ended.handle} />, route.endpoint);
    const list = await screen.findByRole('list', { name: en.events });
    const items = within(list).getAllByRole('button');
    expect(items.map((item) => item.textContent)).toEqual([
      '0:00Went to Firsthttps://example.test/first',
      '0:00A viewer joined: screen · can control',
      '0:01Went to Secondhttps://example.test/second',
      '0:02Blocked: 169.254.169.254',
      // The engine's own entry (the session ended when the test removed it), once.
      expect.stringMatching(/^0:0\dThe session ended$/),
    ]);
    expect(container.querySelector('video')).toHaveAccessibleName(en.video);
    expect(container.querySelector('video')).toHaveAttribute('src', `${route.endpoint}/sessions/${encodeURIComponent(ended.handle)}/recording/media`);
    expect(screen.getByRole('slider', { name: en.timeline })).toBeInTheDocument();
    expect(within(screen.getByRole('group', { name: en.speed })).getAllByRole('button').map((b) => b.textContent)).toEqual(['1×', '2×', '4×']);
    expect(screen.getByRole('region', { name: en.title })).toHaveAttribute('data-state', 'ready');
    expect(screen.queryByText(en.live)).toBeNull();
    expect(await axeViolations(container)).toEqual([]);
  });

  it('jumps to an event when it is activated, marks it current and announces it politely', async () => {
    const user = userEvent.setup();
    const { container } = renderWithRoute(<SessionReplay handle={ended.handle} />, route.endpoint);
    const list = await screen.findByRole('list', { name: en.events });
    const second = within(list).getByRole('button', { name: /Went to Second/ });
    await user.click(second);
    const video = container.querySelector('video')!;
    expect(video.currentTime).toBeCloseTo(1.5, 1);
    expect(second).toHaveAttribute('aria-current', 'true');
    expect(screen.getByRole('slider', { name: en.timeline }).getAttribute('aria-valuetext')).toMatch(/^0:01 of \d:\d\d$/);
    await waitFor(() => expect(container.querySelector('[aria-live="polite"]')).toHaveTextContent('Now: Went to Second'));
    // By keyboard: the first event, then Enter.
    within(list).getAllByRole('button')[0]!.focus();
    await user.keyboard('{Enter}');
    expect(video.currentTime).toBe(0);
    await waitFor(() => expect(container.querySelector('[aria-live="polite"]')).toHaveTextContent('Now: Went to First'));
  });

  it('plays at 1x, 2x and 4x', async () => {
    const user = userEvent.setup();
    const { container } = renderWithRoute(<SessionReplay handle={ended.handle} />, route.endpoint);
    const speeds = await screen.findByRole('group', { name: en.speed });
    const video = container.querySelector('video')!;
    for (const [label, rate] of [['4×', 4], ['2×', 2], ['1×', 1]] as const) {
      await user.click(within(speeds).getByRole('button', { name: label }));
      expect(video.playbackRate).toBe(rate);
      expect(within(speeds).getByRole('button', { name: label })).toHaveAttribute('aria-pressed', 'true');
    }
  });

  it('speaks the seven languages', async () => {
    // Every language has every string English has.
    const keys = (value: object, prefix = ''): string[] => Object.entries(value).flatMap(([key, inner]) => (typeof inner === 'object' ? keys(inner, `${prefix}${key}.`) : [`${prefix}${key}`]));
    for (const language of SHARE_LANGUAGES) expect(keys(resources[language].replay), language).toEqual(keys(en));
    for (const language of SHARE_LANGUAGES) {
      const text = resources[language].replay;
      const { unmount } = renderWithRoute(<SessionReplay handle={ended.handle} />, route.endpoint, language);
      expect(await screen.findByRole('region', { name: text.title })).toBeInTheDocument();
      const list = await screen.findByRole('list', { name: text.events });
      expect(within(list).getAllByRole('button')[2]).toHaveTextContent(text.event.navigation.replace('{{title}}', 'Second'));
      expect(screen.getByRole('slider', { name: text.timeline })).toBeInTheDocument();
      expect(screen.getByRole('group', { name: text.speed })).toBeInTheDocument();
      unmount();
    }
  });

  it('says that a recording still being made plays up to now', async () => {
    const running = await session(true, TIMELINE.slice(0, 1));
    renderWithRoute(<SessionReplay handle={running.handle} />, route.endpoint);
    expect(await screen.findByText(en.live)).toBeInTheDocument();
    expect(screen.getByRole('region', { name: en.title })).toHaveAttribute('data-recording', 'recording');
    expect(screen.getByRole('button', { name: en.loadUpToNow })).toBeInTheDocument();
    await end(running.handle, running.vmId);
  });

  it('says why there is nothing to play: not recorded, removed, not found', async () => {
    const plain = await session(false);
    const removed = await session(true, TIMELINE.slice(0, 1));
    await end(removed.handle, removed.vmId);
    await fetch(`${route.endpoint}/sessions/${encodeURIComponent(removed.handle)}/recording`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    for (const [handle, error, message] of [
      [plain.handle, 'not_recorded', en.error.not_recorded],
      [removed.handle, 'removed', en.error.removed],
      ['not-a-handle', 'not_found', en.error.not_found],
    ] as const) {
      const { container, unmount } = renderWithRoute(<SessionReplay handle={handle} />, route.endpoint);
      expect(await screen.findByRole('alert')).toHaveTextContent(message);
      expect(screen.getByRole('region', { name: en.title })).toHaveAttribute('data-error', error);
      expect(container.querySelector('video')).toBeNull();
      expect(await axeViolations(container)).toEqual([]);
      await act(async () => unmount());
    }
  });
  it('plays from a replay link instead of a handle, and says when a link is not valid (decisions.md 110)', async () => {
    // The link the route mints; the component then reads the engine's replay API, not the route.
    const minted = (await (await fetch(`${route.endpoint}/sessions/${encodeURIComponent(ended.handle)}/recording/link`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { url: string };
    const link = `${t.engine.url}${new URL(minted.url).pathname}`;
    const { container, unmount } = renderWithRoute(<SessionReplay link={link} />, route.endpoint);
    const list = await screen.findByRole('list', { name: en.events });
    expect(within(list).getAllByRole('button')[2]).toHaveTextContent('Went to Second');
    expect(container.querySelector('video')).toHaveAttribute('src', `${link}/media`);
    expect(await axeViolations(container)).toEqual([]);
    await act(async () => unmount());

    const tampered = renderWithRoute(<SessionReplay link={`${link.slice(0, -1)}${link.endsWith('A') ? 'B' : 'A'}`} />, route.endpoint);
    expect(await screen.findByRole('alert')).toHaveTextContent(en.error.invalid);
    expect(screen.getByRole('region', { name: en.title })).toHaveAttribute('data-error', 'invalid');
    expect(tampered.container.querySelector('video')).toBeNull();
    await act(async () => tampered.unmount());
  });
});
