// The cycle: cycle_session_limit N lets N sessions start in a cycle, the next one is `upgrade`;
// a month later (engine clock moved through RBK_CLOCK_OFFSET_FILE) the cycle rolls over, on the
// day cycle_end named.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { failureSchema } from '../../src/protocol/index.js';
import { useEngine } from './context.js';
import { addMonths, DAY_MS, describeReply, isoDay, maskId, PLANS, poll, removeSessions, waitForStatus } from './harness.js';

const clockDir = mkdtempSync(join(tmpdir(), 'rbk-api-clock-'));
const clockFile = join(clockDir, 'offset');
writeFileSync(clockFile, '0');

const ctx = useEngine({ env: { RBK_CLOCK_OFFSET_FILE: clockFile } });

afterAll(() => rmSync(clockDir, { recursive: true, force: true }));

/** The start of the cycle that holds `today`, for a subscription that began on `start`. */
function cycleStartOn(start: string, today: string): string {
  let k = 0;
  while (addMonths(start, k + 1) <= today) k++;
  return addMonths(start, k);
}

describe('cycle_session_limit and the cycle roll-over', () => {
  const start = isoDay(new Date(Date.now() - 15 * DAY_MS));
  const offsetMs = 32 * DAY_MS;
  const repeated = () => ({ browser: 'chromium', url: ctx.pages.page, idempotencyKey: 'cycle-key' });
  let firstCycleIds: string[] = [];
  let api: Awaited<ReturnType<typeof ctx.account>>['api'];

  it('the account\'s cycle starts on its --cycle-start date', async () => {
    ({ api } = await ctx.account([PLANS.basic], { cycleStart: start }));
    const quota = (await api.quota()).json;
    expect(quota).toMatchObject({ cycle_start: start, cycle_end: addMonths(start, 1), cycle_session_limit: 5, cycle_sessions_used: 0, cycle_sessions_remaining: 5 });
    expect(quota.pools[0]).toMatchObject({ cycle_start: start, cycle_end: addMonths(start, 1) });
  });

  it('with cycle_session_limit 5, five sessions start and the sixth is upgrade', async () => {
    for (let i = 0; i < 5; i++) {
      const reply = await api.create(i === 4 ? repeated() : { browser: 'chromium', url: ctx.pages.page });
      expect(reply.json.status, describeReply(reply)).toBe('ok');
      ctx.track(api, reply.json.vmId);
      firstCycleIds.push(reply.json.vmId);
      expect(reply.json.quota).toMatchObject({ cycle_start: start, cycle_end: addMonths(start, 1), cycle_sessions_used: i + 1, cycle_sessions_remaining: 4 - i });
      expect(await waitForStatus(api, reply.json.vmId, ['running'])).toBe('running');
      await removeSessions(api, [reply.json.vmId]);
    }
    const quotaBefore = (await api.quota()).json;
    expect(quotaBefore).toMatchObject({ cycle_sessions_used: 5, cycle_sessions_remaining: 0, running_sessions_used: 0, running_sessions_remaining: 3 });

    const sixth = await api.create({ browser: 'chromium', url: ctx.pages.page });
    expect(sixth.http).toBe(200);
    expect(failureSchema.safeParse(sixth.json).success, describeReply(sixth)).toBe(true);
    expect(sixth.json.status).toBe('upgrade');
    expect((await api.quota()).json).toEqual(quotaBefore);
    expect((await api.data()).json.data).toHaveLength(5);
  });

  it('a month later the cycle rolls over: cycle_start moves to the old cycle_end, cycle_sessions_used is 0 again', async () => {
    const expectedStart = cycleStartOn(start, isoDay(new Date(Date.now() + offsetMs)));
    expect(expectedStart).toBe(addMonths(start, 1));
    const endBefore = (await api.quota()).json.cycle_end;
    expect(endBefore).toBe(expectedStart);
    writeFileSync(clockFile, String(offsetMs));
    const quota = (await poll(() => api.quota(), (r) => r.json?.cycle_start !== start, 10_000)).json;
    const expectedEnd = addMonths(start, 2);
    expect(quota).toMatchObject({ cycle_start: expectedStart, cycle_end: expectedEnd, cycle_sessions_used: 0, cycle_sessions_remaining: 5, cycle_session_limit: 5 });
    expect(quota.pools[0]).toMatchObject({ cycle_start: expectedStart, cycle_end: expectedEnd, cycle_sessions_used: 0, cycle_sessions_remaining: 5 });
    expect((await api.user()).json).toMatchObject({ cycle_start: expectedStart, cycle_end: expectedEnd, cycle_sessions_used: 0 });
  });

  it('sessions start again in the new cycle; the list window and the 24-hour idempotency keys moved with the clock', async () => {
    // The key was used 32 days ago: it is forgotten, the same request starts a new session.
    const reply = await api.create(repeated());
    expect(reply.json.status, describeReply(reply)).toBe('ok');
    ctx.track(api, reply.json.vmId);
    expect(firstCycleIds).not.toContain(reply.json.vmId);
    expect(reply.json.quota).toMatchObject({ cycle_start: addMonths(start, 1), cycle_end: addMonths(start, 2), cycle_sessions_used: 1, cycle_sessions_remaining: 4 });
    // Sessions created 32 days ago are outside the list's last-31-days window.
    const list = (await api.data()).json;
    expect(list.data.map((e: { id: string }) => e.id)).toEqual([maskId(reply.json.vmId)]);
    await removeSessions(api, [reply.json.vmId]);
  });
});
