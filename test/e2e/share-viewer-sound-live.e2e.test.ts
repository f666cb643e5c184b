// End to end, what a person hears (issue 22): a real engine, a confined Chromium session whose page
// plays a 440 Hz WebAudio tone, and the engine's own viewer site opened at the share link in Debian
// Chromium (playwright-core) on http://127.0.0.1, a secure context, so WebCodecs exists. An
// AnalyserNode tapped on what the viewer sends to its speakers hears 440 Hz; Mute in the toolbar
// silences it; a viewer on the view-only link hears it too; when the remote page changes its tone to
// 1 kHz, both viewers hear 1 kHz. Loopback only.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { startEngine, type EngineFixture } from '../helpers/engine.js';
import type { BrowserControl } from '../../src/engine/runtime/browser/control.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';
import { heardNow, SPEAKER_TAP } from '../helpers/hearing.js';
import { TONE_PAGE } from '../helpers/sound.js';



let fixture: EngineFixture;
let engine: Engine;
let origin: string;
let key: string;
let browser: Browser;

const api = v8Caller(() => engine.url, () => key);


/** Polls until the viewer plays a tone at `hz` (one analyser bin is 48000 / 8192 ≈ 5.9 Hz wide); answers the last thing heard. */
async function hears(page: Page, hz: number, timeoutMs = 10_000): Promise<{ peakHz: number; level: number }> {
  return waitFor(() => heardNow(page), (heard) => heard.level > 0.05 && Math.abs(heard.peakHz - hz) < 12, timeoutMs);
}

/** Opens a link in the viewer site, its audio tapped; resolves once the toolbar's sound plays. */
async function openViewer(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 720 } });
  await page.addInitScript(SPEAKER_TAP);
  await page.goto(url);
  await page.getByRole('button', { name: 'Mute', exact: true }).waitFor({ timeout: 30_000 });
  await expect.poll(() => page.locator('.rbk-viewer__sound').getAttribute('data-sound'), { timeout: 15_000 }).toBe('playing');
  return page;
}

beforeAll(async () => {
  fixture = await startEngine({ name: 'hear', site: TONE_PAGE });
  ({ engine, account: { key }, site: { origin } } = fixture);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    // Playwright mutes Chromium by default; the viewer's sound must reach its audio graph unmuted,
    // and start without a click (a person's first click is covered by "Tap to hear").
    ignoreDefaultArgs: ['--mute-audio'],
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await fixture?.close();
});

describe('a share link\'s viewer hears the remote browser', () => {
  it('plays the remote page\'s 440 Hz tone, falls silent on Mute, reaches a view-only viewer, and follows the page to 1 kHz', async () => {
    const created = await api('/vm/create', { browser: 'chromium', url: `${origin}/`, shareLanguage: 'en' });
    expect(created.status).toBe('ok');
    expect(await waitFor(async () => (await api(`/vm/data?id=${created.vmId}`)).data?.[0]?.status, (status) => status === 'running', 30_000)).toBe('running');
    const row = (await engine.store.session(created.vmId))!;
    const control: BrowserControl = engine.runtime.get(row.runtime_id!)!.control!;
    // The remote page is playing (the engine's Chromium lets pages play sound without a gesture).
    expect(await waitFor(() => control.evaluate('window.tone ? tone.context.state : "loading"'), (state) => state === 'running', 10_000)).toBe('running');

    const viewer = await openViewer(created.shareUrl);
    let watcher: Page | undefined;
    try {
      expect(Math.abs((await hears(viewer, 440)).peakHz - 440)).toBeLessThan(12);

      // Mute in the toolbar: nothing reaches the speakers, and the viewer stops listening (the
      // engine sends it nothing and encodes nothing); pressed again, the tone is back.
      const sound = engine.sessions.endsOf(created.vmId)!.sound!;
      expect(sound.listening).toBe(1);
      const mute = viewer.getByRole('button', { name: 'Mute', exact: true });
      await mute.click();
      await expect.poll(() => mute.getAttribute('aria-pressed')).toBe('true');
      await expect.poll(async () => (await heardNow(viewer)).level, { timeout: 3000 }).toBeLessThan(1e-4);
      await expect.poll(() => sound.listening, { timeout: 3000 }).toBe(0);
      expect(sound.encoderProcess).toBeNull();
      await mute.click();
      await expect.poll(() => mute.getAttribute('aria-pressed')).toBe('false');
      expect(Math.abs((await hears(viewer, 440, 5000)).peakHz - 440)).toBeLessThan(12);

      // Whoever holds the view-only link hears the session too.
      const made = await fetch(`${engine.url}/share/${new URL(created.shareUrl).search.slice(1)}/view-only`, { method: 'POST' });
      const viewOnly = (await made.json()) as { shareUrl: string };
      watcher = await openViewer(viewOnly.shareUrl);
      await expect.poll(() => watcher!.getByText('View only').first().isVisible().catch(() => false), { timeout: 5000 }).toBe(true);
      expect(Math.abs((await hears(watcher, 440)).peakHz - 440)).toBeLessThan(12);

      // The remote page changes its tone: both viewers hear the new one.
      await control.evaluate('tone.frequency.value = 1000');
      expect(Math.abs((await hears(viewer, 1000)).peakHz - 1000)).toBeLessThan(12);
      expect(Math.abs((await hears(watcher, 1000)).peakHz - 1000)).toBeLessThan(12);
    } finally {
      await watcher?.close();
      await viewer.close();
      await api('/vm/remove', { id: created.vmId });
    }
  }, 120_000);
});
