// Several programs on one Firefox ESR session at once (issue 45, decisions.md 169-171): Firefox's
// agent holds one WebDriver BiDi session per browser, and the node's hub gives each program a
// session of its own on it. Two Puppeteer programs drive their own pages at once, one leaves and
// the other drives on, a third beyond the cap is refused; what a program made (a preload script, an
// intercept, a subscription) is its own (the other cannot remove it, nor hears its events, nor lets
// its held request go) and is undone when it leaves (its script runs no more, its held request goes
// on); a saved profile keeps what a program stored for the next session's program; and a Firefox
// app window, whose tab watcher is one client of the same hub, is driven by a program while the
// viewer's tab strip follows, before and after, its prompts left for the program to answer, and
// its recording's timeline shows the program coming and going.
import type { IncomingMessage, ServerResponse } from 'node:http';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { bidiProgram, type BiDiProgram } from '../helpers/bidi-program.js';
import { recordedPlan, startEngine, type EngineFixture } from '../helpers/engine.js';
import { waitFor } from '../helpers/session.js';
import { v8Caller } from '../helpers/site.js';

/** Programs per session (config): the cap a third connection meets. */
const CAP = 2;

let fixture: EngineFixture;
let engine: Engine;
let origin: string;
let key: string;
let vmId: string;
const closers: Array<() => unknown> = [];

/** Pages titled by their path (`/a` is "A"); `/held` is the page a program's intercept holds. */
function site(request: IncomingMessage, response: ServerResponse): void {
  const path = new URL(request.url ?? '/', 'http://site').pathname;
  if (path === '/favicon.ico') return void response.writeHead(404).end();
  const title = path === '/' ? 'Home' : path.slice(1, 2).toUpperCase() + path.slice(2);
  response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>${title}</title><p>${title}</p>`);
}

const api = v8Caller(() => engine.url, () => key);
const statusOf = async (id: string) => (await api(`/vm/data?id=${id}`)).data?.[0]?.status as string | undefined;

async function endpoint(id = vmId): Promise<string> {
  const answer = await api(`/vm/automation?id=${id}`);
  expect(answer.status).toBe('ok');
  return answer.webDriverBiDiEndpoint as string;
}

async function puppeteerProgram(id = vmId): Promise<Browser> {
  const browser = await puppeteer.connect({ browserWSEndpoint: await endpoint(id), protocol: 'webDriverBiDi', defaultViewport: null, protocolTimeout: 20_000 });
  closers.push(() => browser.disconnect().catch(() => undefined));
  return browser;
}

/** A raw BiDi program with its session open. */
async function rawProgram(): Promise<BiDiProgram> {
  const program = await bidiProgram(await endpoint(), closers);
  expect((await program.call('session.new', { capabilities: {} })).type).toBe('success');
  return program;
}

/** What `expression` reads in the page of `context`, as the program `program` asks. */
async function read(program: BiDiProgram, context: string, expression: string): Promise<unknown> {
  const answer = await program.call('script.evaluate', { expression, target: { context }, awaitPromise: false });
  expect(answer.type).toBe('success');
  return answer.result.result.value;
}

beforeAll(async () => {
  // Recording allowed: a recorded app window's timeline shows the program coming and going.
  const recorded = recordedPlan();
  fixture = await startEngine({ name: 'bidi-programs', site, ...recorded, config: { ...recorded.config, automation: { programsPerSession: CAP } } });
  ({ engine, account: { key }, site: { origin } } = fixture);
  const created = await api('/vm/create', { browser: 'firefox-esr', url: `${origin}/`, automation: true });
  expect(created.status).toBe('ok');
  vmId = created.vmId;
  expect(await waitFor(() => statusOf(vmId), (status) => status === 'running', 60_000)).toBe('running');
}, 120_000);

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

afterAll(async () => {
  await fixture?.close();
});

describe('several programs on one Firefox ESR session', () => {
  it('drives two Puppeteer programs at once, each on its own page; one leaves and the other drives on; a third is refused at the cap', async () => {
    const [one, two] = await Promise.all([puppeteerProgram(), puppeteerProgram()]);
    const [pageOne, pageTwo] = await Promise.all([one.newPage(), two.newPage()]);
    await Promise.all([pageOne.goto(`${origin}/apples`), pageTwo.goto(`${origin}/pears`)]);
    expect(await Promise.all([pageOne.evaluate(() => document.title), pageTwo.evaluate(() => document.title)])).toEqual(['Apples', 'Pears']);
    // A third program meets the cap, as before the hub.
    const third = await bidiProgram(await endpoint(), closers);
    expect(await third.closed).toBe(4002);
    await pageOne.close();
    await one.disconnect();
    // The other drives on, and the seat the first left is taken again.
    await pageTwo.goto(`${origin}/plums`);
    expect(await pageTwo.evaluate(() => document.title)).toBe('Plums');
    const again = await waitFor(async () => bidiProgram(await endpoint(), closers).then((program) => program.call('session.new', { capabilities: {} })).catch(() => undefined), (answer) => answer?.type === 'success', 15_000);
    expect(again).toMatchObject({ type: 'success' });
    await pageTwo.close();
  }, 90_000);

  it('keeps a program\'s preload scripts, subscriptions and intercepts its own, and undoes them when it leaves', async () => {
    const [a, b] = await Promise.all([rawProgram(), rawProgram()]);
    const { context: pageB } = (await b.call('browsingContext.create', { type: 'tab' })).result as { context: string };
    // A's script for every page, and one for its own page only.
    const everywhere = await a.call('script.addPreloadScript', { functionDeclaration: '() => { window.preloadedBy = "a"; }' });
    expect(everywhere.type).toBe('success');
    const { context: pageA } = (await a.call('browsingContext.create', { type: 'tab' })).result as { context: string };
    expect((await a.call('script.addPreloadScript', { functionDeclaration: '() => { window.onlyA = true; }', contexts: [pageA] })).type).toBe('success');
    // A hears its pages load; B asked for log entries only.
    const heard = await a.call('session.subscribe', { events: ['browsingContext.load', 'network.beforeRequestSent'] });
    expect((await b.call('session.subscribe', { events: ['log.entryAdded'] })).type).toBe('success');
    await b.call('browsingContext.navigate', { context: pageB, url: `${origin}/pears`, wait: 'complete' });
    expect(await read(b, pageB, 'String(window.preloadedBy) + " " + String(window.onlyA)')).toBe('a undefined');
    await waitFor(() => a.events, (events) => events.some((event) => event.method === 'browsingContext.load' && event.params.context === pageB));
    expect(b.events.filter((event) => event.method !== 'log.entryAdded')).toEqual([]);
    // B cannot remove what A made, nor end A's subscription.
    for (const [method, params, named] of [
      ['script.removePreloadScript', { script: everywhere.result.script }, 'preload script'],
      ['session.unsubscribe', { subscriptions: [heard.result.subscription] }, 'subscription'],
    ] as const) {
      expect(await b.call(method, params), method).toMatchObject({ type: 'error', error: 'invalid argument', message: expect.stringContaining(`${method} is refused in remote-browser-kit sessions: ${named}`) });
    }
    // A holds requests to /held; B's page goes there and waits, and B may not let A's request go.
    const intercept = await a.call('network.addIntercept', { phases: ['beforeRequestSent'], urlPatterns: [{ type: 'pattern', pathname: '/held' }] });
    expect(intercept.type).toBe('success');
    expect((await b.call('session.subscribe', { events: ['network.beforeRequestSent'] })).type).toBe('success');
    // Firefox answers the navigation once its request goes on: it waits while A's intercept holds it.
    const going = b.call('browsingContext.navigate', { context: pageB, url: `${origin}/held`, wait: 'none' });
    const held = (events: BiDiProgram['events']) => events.find((event) => event.method === 'network.beforeRequestSent' && String(event.params.request.url).endsWith('/held'));
    const seenByA = await waitFor(() => held(a.events), (event) => event !== undefined, 15_000);
    const seenByB = await waitFor(() => held(b.events), (event) => event !== undefined, 15_000);
    expect(seenByA!.params).toMatchObject({ isBlocked: true, intercepts: [intercept.result.intercept] });
    expect(seenByB!.params.isBlocked).toBe(false);
    expect(await b.call('network.continueRequest', { request: seenByB!.params.request.request })).toMatchObject({ type: 'error', message: expect.stringContaining('another program\'s intercept') });
    expect(await b.call('network.removeIntercept', { intercept: intercept.result.intercept })).toMatchObject({ type: 'error', message: expect.stringContaining('intercept') });
    expect(await read(b, pageB, 'document.title')).not.toBe('Held');
    // A leaves: its held request goes on, and its script runs in no new page.
    a.socket.close();
    expect(await going).toMatchObject({ type: 'success' });
    expect(await waitFor(() => read(b, pageB, 'document.title'), (title) => title === 'Held', 15_000)).toBe('Held');
    await b.call('browsingContext.navigate', { context: pageB, url: `${origin}/plums`, wait: 'complete' });
    expect(await read(b, pageB, 'String(window.preloadedBy)')).toBe('undefined');
    await b.call('browsingContext.close', { context: pageB });
  }, 90_000);

  it('answers what a connection\'s own session is: none before session.new and after session.end, one at a time, opened again', async () => {
    const program = await bidiProgram(await endpoint(), closers);
    expect(await program.call('session.status')).toMatchObject({ type: 'success', result: { ready: true } });
    expect(await program.call('browsingContext.getTree', { maxDepth: 0 })).toMatchObject({ type: 'error', error: 'invalid session id' });
    expect((await program.call('session.new', { capabilities: {} })).type).toBe('success');
    expect(await program.call('session.new', { capabilities: {} })).toMatchObject({ type: 'error', error: 'session not created', message: expect.stringContaining('has a session already') });
    // By event name it would reach another program's subscriptions: by id only.
    expect(await program.call('session.unsubscribe', { events: ['browsingContext.load'] })).toMatchObject({ type: 'error', error: 'invalid argument', message: expect.stringContaining('unsubscribe by the ids') });
    expect(await program.call('session.end')).toMatchObject({ type: 'success' });
    expect(await program.call('browsingContext.getTree', { maxDepth: 0 })).toMatchObject({ type: 'error', error: 'invalid session id' });
    expect((await program.call('session.new', { capabilities: {} })).type).toBe('success');
    expect(await program.call('browsingContext.getTree', { maxDepth: 0 })).toMatchObject({ type: 'success' });
  });

  it('stores, through a program, what a saved profile gives back to the next session\'s program', async () => {
    const profileId = (await api('/profile/create', { name: 'Fruit', browser: 'firefox-esr' })).profile.id as string;
    /** A session on the profile, driven by a Puppeteer program on its first page; removed (its profile saved) once `drive` has run. */
    const onProfile = async <T>(drive: (page: Page) => Promise<T>): Promise<T> => {
      const created = await api('/vm/create', { browser: 'firefox-esr', url: `${origin}/apples`, automation: true, profile: { id: profileId } });
      expect(created.status, JSON.stringify(created)).toBe('ok');
      expect(await waitFor(() => statusOf(created.vmId), (status) => status === 'running', 60_000)).toBe('running');
      const browser = await puppeteerProgram(created.vmId);
      const [page] = await browser.pages();
      await page!.goto(`${origin}/apples`);
      const result = await drive(page!);
      await browser.disconnect();
      expect((await api('/vm/remove', { id: created.vmId })).status).toBe('ok');
      expect(await waitFor(() => statusOf(created.vmId), (status) => status === 'deleted', 60_000)).toBe('deleted');
      return result;
    };
    await onProfile((page) => page.evaluate(() => {
      document.cookie = 'fruit=apple; max-age=3600; path=/';
      localStorage.setItem('basket', 'three apples');
    }));
    expect(await onProfile((page) => page.evaluate(() => [document.cookie, localStorage.getItem('basket')]))).toEqual(['fruit=apple', 'three apples']);
  }, 240_000);

  it('drives a Firefox ESR app window while the viewer\'s tab strip follows, before and after, and its recording\'s timeline shows the program coming and going', async () => {
    const created = await api('/vm/create', { browser: 'firefox-esr', url: `${origin}/apples`, window: 'app', automation: true, record: true });
    expect(created.status).toBe('ok');
    const appId = created.vmId as string;
    try {
      expect(await waitFor(() => statusOf(appId), (status) => status === 'running', 60_000)).toBe('running');
      const tabs = engine.runtime.get((await engine.store.session(appId))!.runtime_id!)!.tabs!;
      const titles = () => tabs.list().map((tab) => tab.title).join(',');
      const stop = tabs.watch();
      closers.push(stop);
      expect(await waitFor(titles, (value) => value === 'Apples', 15_000)).toBe('Apples');
      const browser = await puppeteerProgram(appId);
      const [page] = await browser.pages();
      await page!.goto(`${origin}/pears`);
      expect(await page!.evaluate(() => document.title)).toBe('Pears');
      // Prompts wait for whoever answers them (the watcher opened the session with "ignore"): here the program.
      page!.once('dialog', (dialog) => void dialog.accept());
      expect(await page!.evaluate(() => confirm('Go on?'))).toBe(true);
      // The engine's tab watcher, on the same BiDi session, still follows the page.
      expect(await waitFor(titles, (value) => value === 'Pears', 15_000)).toBe('Pears');
      await browser.disconnect();
      // The program gone, the watcher's own session stays: a tab the viewer opens is seen.
      await tabs.open(`${origin}/plums`);
      expect(await waitFor(titles, (value) => value === 'Pears,Plums', 15_000)).toBe('Pears,Plums');
      // The recording's timeline: the program attached, the page it opened, the program left, in that order.
      const told = (entry: { type: string; url?: string }) => ['program-attached', 'program-left'].includes(entry.type) || (entry.type === 'navigation' && /\/(pears|plums)$/.test(entry.url ?? ''));
      const timeline = await waitFor(
        async () => ((await api(`/vm/recording?id=${appId}`)).recording?.timeline ?? []) as Array<{ type: string; url?: string; channel?: string }>,
        (entries) => entries.some((entry) => entry.type === 'navigation' && entry.url?.endsWith('/plums')),
        30_000,
      );
      expect(timeline.filter(told).map((entry) => entry.type === 'navigation' ? new URL(entry.url!).pathname : `${entry.type} ${entry.channel}`))
        .toEqual(['program-attached automation', '/pears', 'program-left automation', '/plums']);
    } finally {
      expect((await api('/vm/remove', { id: appId })).status).toBe('ok');
    }
  }, 120_000);
});
