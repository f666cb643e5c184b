// The two first touches the standby and hibernation benches time (issue 46): a share-link viewer's
// RFB connection until the page's colour is on screen, and a program's `vm/automation` +
// connectOverCDP until it sees its pages and one command is answered. On a session in standby or
// hibernated, each is also what wakes or resumes it.
import { chromium } from 'playwright-core';
import { connectRfb } from '../test/helpers/rfb-client.js';

export type Colour = [number, number, number];
/** A v8 call with the bench's key. */
export type Call = (path: string, body?: unknown) => Promise<Record<string, any>>;

/** Milliseconds from a viewer's connection through the share link to `colour` on screen. */
export async function viewerFirstFrame(engineUrl: string, link: string, colour: Colour, timeoutMs = 60_000): Promise<number> {
  const began = performance.now();
  const viewer = await connectRfb(`${engineUrl.replace(/^http/, 'ws')}/share/${link}/rfb`, timeoutMs);
  try {
    await viewer.waitForPixel(640, 600, colour, timeoutMs);
    return performance.now() - began;
  } finally {
    viewer.close();
  }
}

/**
 * Milliseconds from a program asking for the session's automation address to its first answered
 * command on a page of `origin`, once it sees `pages` pages (or 20 s passed); with the pages found.
 */
export async function programFirstCommand(call: Call, id: string, origin: string, pages = 1, timeoutMs = 60_000): Promise<{ ms: number; pages: number }> {
  const began = performance.now();
  const endpoint = await call(`/vm/automation?id=${id}`);
  const browser = await chromium.connectOverCDP(endpoint.browserWSEndpoint, { timeout: timeoutMs });
  try {
    const all = () => browser.contexts().flatMap((context) => context.pages());
    const deadline = Date.now() + 20_000;
    while ((all().length < pages || !all().some((p) => p.url().startsWith(origin))) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const page = all().find((p) => p.url().startsWith(origin));
    if (!page) throw new Error(`session ${id}: no page of ${origin} found`);
    await page.evaluate(() => document.title);
    return { ms: performance.now() - began, pages: all().length };
  } finally {
    await browser.close();
  }
}
