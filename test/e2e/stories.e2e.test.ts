// The Storybook stories as tests: a fresh `storybook build`, then every story in Debian Chromium,
// one after another in one page: it must render, its play function must pass, and the a11y
// addon's axe run in a real browser must find no violation.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorybook, type BuiltStorybook } from '../helpers/storybook.js';

interface StoryResult {
  id: string;
  /** What went wrong: a render or play exception, an a11y finding, or no end in time. */
  problems: string[];
}

let storybook: BuiltStorybook;
let browser: Browser;
let origin: string;
let dir: string;

beforeAll(async () => {
  storybook = await openStorybook();
  ({ browser, origin, dir } = storybook);
}, 240_000);

afterAll(async () => {
  await storybook?.close();
});

describe('Storybook stories', () => {
  it('every story renders, passes its play function and has no accessibility violation', async () => {
    const index = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as { entries: Record<string, { id: string; type: string }> };
    const ids = Object.values(index.entries).filter((entry) => entry.type === 'story').map((entry) => entry.id);
    for (const component of ['shareviewer', 'usagemeters', 'sessionreplay']) expect(ids.some((id) => id.startsWith(`components-${component}--`)), component).toBe(true);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Opened on the last story, then story by story from the first through the preview's own
    // channel: no reload (the bundle loads once), and every story is rendered after the listeners.
    await page.goto(`${origin}/iframe.html?id=${ids.at(-1)}&viewMode=story`);
    // The first story shown before the others are asked for (Storybook marks the body then).
    await page.waitForFunction(() => document.body.classList.contains('sb-show-main'), undefined, { timeout: 60_000 });
    const runStories = () => page.evaluate(async (storyIds: string[]): Promise<StoryResult[]> => {
      type Channel = { on(event: string, listener: (payload: any) => void): void; emit(event: string, payload: unknown): void };
      const host = window as unknown as { __STORYBOOK_ADDONS_CHANNEL__?: Channel };
      while (!host.__STORYBOOK_ADDONS_CHANNEL__) await new Promise((resolve) => setTimeout(resolve, 20));
      const channel = host.__STORYBOOK_ADDONS_CHANNEL__;
      const problems = new Map<string, string[]>();
      const finished = new Map<string, () => void>();
      let current = '';
      const note = (problem: string) => problems.get(current)?.push(problem);
      channel.on('playFunctionThrewException', (error) => note(`play: ${String(error?.message ?? error).replace(/\u001b\[\d+m/g, '')}`));
      channel.on('storyThrewException', (error) => note(`render: ${String(error?.message ?? error)}`));
      channel.on('storyErrored', (error) => note(`error: ${JSON.stringify(error).slice(0, 500)}`));
      channel.on('storyFinished', (event) => {
        for (const reporter of event.reporters ?? []) {
          if (reporter.status === 'passed') continue;
          const violations = (reporter.result?.violations ?? []) as Array<{ id: string; nodes: Array<{ target: string[] }> }>;
          note(`${reporter.type}: ${violations.length ? violations.map((v) => `${v.id} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`).join('; ') : JSON.stringify(reporter.result).slice(0, 300)}`);
        }
        finished.get(event.storyId)?.();
      });
      const results: StoryResult[] = [];
      for (const id of storyIds) {
        current = id;
        problems.set(id, []);
        // Each story's own limit, cleared when it finishes: a limit left running would later be
        // counted against whichever story is shown then.
        let limit: ReturnType<typeof setTimeout> | undefined;
        const done = new Promise<void>((resolve) => {
          finished.set(id, resolve);
          limit = setTimeout(() => (note('did not finish within 20 s'), resolve()), 20_000);
        });
        channel.emit('setCurrentStory', { storyId: id, viewMode: 'story' });
        await done;
        clearTimeout(limit);
        results.push({ id, problems: problems.get(id)! });
      }
      return results;
    }, ids);
    // On a busy machine the preview was seen to reload itself once, at the first story switch,
    // taking the running evaluate's context with it: then the whole run starts again, once.
    const results = await runStories().catch(async (error: Error) => {
      if (!/Execution context was destroyed/.test(error.message)) throw error;
      await page.waitForFunction(() => document.body.classList.contains('sb-show-main'), undefined, { timeout: 60_000 });
      return runStories();
    });
    await page.close();

    expect(results).toHaveLength(ids.length);
    expect(results.filter((result) => result.problems.length)).toEqual([]);
  }, 240_000);
});
