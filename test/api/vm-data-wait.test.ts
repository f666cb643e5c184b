// `GET /v8/vm/data?id=&wait=` (decisions.md 82, issue 37): a read of a starting session that answers
// the moment its status moves on, or with `starting` once the wait is over; bad waits are refused
// naming the field; and the engine's trace of a start, logged at debug level only.
import { beforeAll, describe, expect, it } from 'vitest';
import { vmDataResponseSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { Api, describeReply, PLANS, testConfig, waitForStatus } from './harness.js';

describe('vm/data with wait', () => {
  const ctx = useEngine();
  let api: Api;

  beforeAll(async () => {
    api = (await ctx.account([PLANS.burst])).api;
  });

  it('answers once the session runs, without polling and before the wait is over', async () => {
    const created = await api.create({ browser: 'chromium', url: ctx.pages.page });
    expect(created.json.status, describeReply(created)).toBe('ok');
    const vmId: string = created.json.vmId;
    ctx.track(api, vmId);
    // One request. Its socket gives up well before the 30 s wait: an answer means the engine
    // answered on the move, not at the end of the wait (a start fails within its own 20 s).
    const reply = await api.get(`/v8/vm/data?id=${vmId}&wait=30000`, { timeoutMs: 25_000 });
    expect(vmDataResponseSchema.safeParse(reply.json).success, describeReply(reply)).toBe(true);
    expect(reply.json.data).toHaveLength(1);
    expect(reply.json.data[0].status).toBe('running');
  });

  it('answers with starting when the wait is over first', async () => {
    // A cold start (these engines keep no warm pool) takes far longer than this wait.
    const created = await api.create({ browser: 'chromium', url: ctx.pages.page });
    const vmId: string = created.json.vmId;
    ctx.track(api, vmId);
    const reply = await api.get(`/v8/vm/data?id=${vmId}&wait=50`);
    expect(reply.json.status, describeReply(reply)).toBe('ok');
    expect(reply.json.data[0].status).toBe('starting');
    expect(await waitForStatus(api, vmId, ['running'])).toBe('running');
  });

  it('answers at once for a session that is not starting, and for an unknown id', async () => {
    const created = await api.create({ browser: 'chromium', url: ctx.pages.page });
    const vmId: string = created.json.vmId;
    ctx.track(api, vmId);
    expect(await waitForStatus(api, vmId, ['running'])).toBe('running');
    // Socket timeouts shorter than the wait: answered at once or failed.
    const running = await api.get(`/v8/vm/data?id=${vmId}&wait=30000`, { timeoutMs: 10_000 });
    expect(running.json.data[0].status).toBe('running');
    const unknown = await api.get(`/v8/vm/data?id=${'0'.repeat(32)}&wait=30000`, { timeoutMs: 10_000 });
    expect(unknown.json).toEqual({ status: 'ok', data: [] });
  });

  it('refuses a wait that is not a whole number of milliseconds, or comes without id, naming the field', async () => {
    const id = '0'.repeat(32);
    for (const query of [`id=${id}&wait=`, `id=${id}&wait=abc`, `id=${id}&wait=-1`, `id=${id}&wait=1.5`, `id=${id}&wait=1e3`, `id=${id}&wait=99999999999`, 'wait=1000']) {
      const reply = await api.get(`/v8/vm/data?${query}`);
      expect(reply.http, query).toBe(200);
      expect(reply.json.status, `${query}: ${describeReply(reply)}`).toBe('denied');
      expect(reply.json.message, query).toMatch(/^wait: /);
    }
  });

  it('takes a wait longer than the cap (it waits the cap at most)', async () => {
    const reply = await api.get(`/v8/vm/data?id=${'0'.repeat(32)}&wait=600000`, { timeoutMs: 10_000 });
    expect(reply.json).toEqual({ status: 'ok', data: [] });
  });

  it('leaves v7 as it was: wait is not read there', async () => {
    const reply = await api.get(`/v7/vm/data?id=${'0'.repeat(32)}&wait=abc`);
    expect(reply.json.status, describeReply(reply)).toBe('ok');
  });

  it('logs no start trace at the info level', async () => {
    const created = await api.create({ browser: 'chromium', url: ctx.pages.page });
    const vmId: string = created.json.vmId;
    ctx.track(api, vmId);
    expect(await waitForStatus(api, vmId, ['running'])).toBe('running');
    expect(ctx.engine.output()).not.toContain('session start trace');
  });
});

describe('the start trace at debug level', () => {
  const ctx = useEngine({ config: testConfig({ log: { level: 'debug', pretty: false } }) });

  it('logs where one start spent its time, step by step', async () => {
    const { api } = await ctx.account([PLANS.burst]);
    const created = await api.create({ browser: 'chromium', url: ctx.pages.page });
    const vmId: string = created.json.vmId;
    ctx.track(api, vmId);
    expect(await waitForStatus(api, vmId, ['running'])).toBe('running');
    let line: Record<string, any> | undefined;
    for (let tries = 0; tries < 50 && !line; tries++) {
      line = ctx.engine
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as Record<string, any>)
        .find((record) => record.msg === 'session start trace' && record.vmId === vmId);
      if (!line) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(line, ctx.engine.output().slice(-2000)).toBeDefined();
    expect(line!.level).toBe(20);
    expect(line!.from).toBe('create');
    expect(Object.keys(line!.steps)).toEqual(expect.arrayContaining(['admission', 'placement', 'transaction', 'handoff', 'runtime', 'statusWrite', 'told']));
    for (const ms of Object.values(line!.steps)) expect(ms).toBeGreaterThanOrEqual(0);
    expect(['cold', 'warm-display', 'warm-browser']).toContain(line!.runtime.start);
    expect(Object.keys(line!.runtime.parts)).toEqual(expect.arrayContaining(['slot', 'browser']));
    expect(line!.totalMs).toBeGreaterThanOrEqual(line!.steps.runtime);
  });
});
