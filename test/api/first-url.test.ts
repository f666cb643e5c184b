// The create request's `url` reaches the browser as the parsed, normalised address (issue 20), in
// v8, v7 and v6 alike: an odd but valid address (upper-case scheme, spaces around it, a tab and a
// dot segment in its path, a space in its query) is what the browser is started on only as
// `new URL(url).href`, read from the browser's own command line on this host, and that page loads.
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useEngine } from './context.js';
import { describeReply, PLANS, poll, waitForStatus } from './harness.js';

const ctx = useEngine();

/** The odd spelling a caller sends, and the address the browser must be given. */
const odd = () => {
  const { host } = new URL(ctx.pages.origin);
  return { sent: `  HTTP://${host}/odd\tpath/../page?q=a b  `, parsed: `http://${host}/page?q=a%20b` };
};

/**
 * Every argument of every process on this host that names the page server's address (its port is
 * this file's own): the session's browser, and the wrappers that started it.
 */
async function argumentsNamingPages(): Promise<string[]> {
  const port = `:${new URL(ctx.pages.origin).port}`;
  const found: string[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
    found.push(...argv.filter((arg) => arg.includes(port)));
  }
  return found;
}

/** Waits for the browser to be started on the address; answers what the processes were given. */
async function startedOn(): Promise<string[]> {
  return poll(argumentsNamingPages, (args) => args.length > 0, 20_000);
}

describe('an odd but valid url', () => {
  it('v8: reaches the browser as the parsed address, and its page loads', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const { sent, parsed } = odd();
    const created = await api.create({ browser: 'chromium', url: sent });
    expect(created.json?.status, describeReply(created)).toBe('ok');
    ctx.track(api, created.json.vmId);
    expect(await waitForStatus(api, created.json.vmId, ['running'], 30_000)).toBe('running');
    expect(new Set(await startedOn())).toEqual(new Set([parsed]));
    expect(await poll(async () => ctx.pages.hits('/page?q=a%20b'), (hits) => hits > 0)).toBeGreaterThan(0);
    await api.remove(created.json.vmId);
    await poll(argumentsNamingPages, (args) => args.length === 0, 10_000);
  }, 60_000);

  it('v7: reaches the browser as the parsed address', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const { sent, parsed } = odd();
    const created = await api.post('/v7/vm/create', { browser: 'chromium', url: sent });
    expect(created.json?.status, describeReply(created)).toBe('ok');
    ctx.track(api, created.json.vmId);
    expect(await waitForStatus(api, created.json.vmId, ['running'], 30_000)).toBe('running');
    expect(new Set(await startedOn())).toEqual(new Set([parsed]));
    await api.remove(created.json.vmId);
    await poll(argumentsNamingPages, (args) => args.length === 0, 10_000);
  }, 60_000);

  it('v6 (/b): reaches the browser as the parsed address', async () => {
    const { api } = await ctx.account([PLANS.basic]);
    const { sent, parsed } = odd();
    const token = (await ctx.anon.get(`/api/v6/getKey?key=${encodeURIComponent(api.key!)}`)).json.token as string;
    const launched = await ctx.anon.get(`/b?${new URLSearchParams({ key: token, url: sent })}`);
    expect(launched.http, describeReply(launched)).toBe(302);
    expect(new Set(await startedOn())).toEqual(new Set([parsed]));
    // /b gives its caller no vmId: the session ends with the engine, after this file.
  }, 60_000);
});
