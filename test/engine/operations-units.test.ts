// The pure parts of operating the service (issue 27): the end-reason categories every source of an
// end maps to, the route templates metrics and logs use (never an id), the log's redaction, and
// the webhooks' retry schedule.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { routeOf } from '../../src/engine/operations/http-observer.js';
import { createLogger, holdLines, prettyLine } from '../../src/engine/operations/logger.js';
import { endCategory } from '../../src/engine/sessions/end-reasons.js';
import { nextAttemptAt } from '../../src/engine/webhooks/webhooks.js';

describe('end categories', () => {
  it.each([
    ['stopping', 'removed', 'removed'],
    ['suspended', 'no viewer for the idle timeout', 'idle'],
    ['suspended', 'maximum session duration reached', 'max-duration'],
    ['suspended', 'the plan lapsed', 'plan-lapsed'],
    ['suspended', 'the session reached its memory limit (2048 MB): Chromium exited (SIGKILL)', 'memory-cap'],
    ['suspended', 'Chromium exited (code 1)', 'browser-exit'],
    ['suspended', 'Xvnc exited (SIGKILL)', 'browser-exit'],
    ['suspended', 'the node that ran the session stopped answering', 'node-lost'],
    ['suspended', 'the engine restarted', 'node-lost'],
    ['error', 'the node that started the session stopped answering', 'node-lost'],
    ['error', 'the engine restarted before the session was ready', 'node-lost'],
    ['error', 'Chromium did not start within 30 s', 'start-failed'],
  ])('%s with "%s" is %s', (status, reason, category) => {
    expect(endCategory(status, reason)).toBe(category);
  });
});

describe('route templates', () => {
  it.each([
    ['/v8/vm/data', '/v8/vm/data'],
    ['/v7/vm/create', '/v7/vm/create'],
    ['/v8/vm/0123456789abcdef', '/v8/unknown'],
    ['/share/AbCdEfGhIjKlMnOpQrStUv', '/share/:link'],
    ['/share/AbCdEfGhIjKlMnOpQrStUv/events', '/share/:link/events'],
    ['/en/s', '/:lang/s'],
    ['/automation/abc.123.def', '/automation/:token'],
    ['/internal/v1/sessions/0123456789abcdef0123456789abcdef/remove', '/internal/v1/sessions'],
    ['/api/v6/getKey', '/api/v6/getKey'],
    ['/readyz', '/readyz'],
    ['/wp-admin/secret-token', 'unmatched'],
  ])('%s is %s', (path, route) => {
    expect(routeOf(path)).toBe(route);
  });

  it('names a held read of a session (vm/data with a wait) apart from the status reads', () => {
    expect(routeOf('/v8/vm/data', new URLSearchParams('id=abc&wait=30000'))).toBe('/v8/vm/data?wait');
    for (const query of ['id=abc', 'id=abc&wait=0', 'id=abc&wait=abc']) expect(routeOf('/v8/vm/data', new URLSearchParams(query)), query).toBe('/v8/vm/data');
  });
});

describe('the log', () => {
  it('redacts credentials by field name and in free text', () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    const log = createLogger({ level: 'info', pretty: false }, out, { node: 'n1' });
    const key = `rbk_${'k'.repeat(43)}`;
    log.info({ key, headers: { authorization: `Bearer ${key}`, cookie: 'session=abc' }, shareUrl: 'https://x.test/en/s?LinkLinkLinkLink', session: { handle: 'h-123', secret: 'whsec_x' } }, `called with ${key} for /en/s?LinkLinkLinkLink and /share/LinkLinkLinkLink/events`);
    log.warn({ err: Object.assign(new Error(`failed for Bearer ${key}`), { code: 'E_X' }) }, 'failed');
    const text = lines.join('\n');
    for (const secret of [key, 'LinkLinkLinkLink', 'session=abc', 'h-123', 'whsec_x']) expect(text).not.toContain(secret);
    const first = JSON.parse(lines[0]!);
    expect(first).toMatchObject({ level: 30, node: 'n1', key: '[redacted]', headers: { authorization: '[redacted]', cookie: '[redacted]' }, session: { handle: '[redacted]' } });
    expect(JSON.parse(lines[1]!).err).toEqual({ message: 'failed for Bearer [redacted]', code: 'E_X' });
  });

  it('reads as one short line on a terminal', () => {
    // Local time: what the clock beside the terminal says.
    const time = new Date(2026, 0, 1, 12, 0, 0, 5).getTime();
    const record = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, levelName: 'info', time, pid: 1, node: 'n1', ...fields });
    expect(prettyLine(record({ msg: 'session running', vmId: 'abc', account: 'a1', start: 'warm', startMs: 812 }))).toBe(
      '12:00:00.005 INFO  session running  vmId=abc account=a1 start=warm startMs=812\n',
    );
    expect(prettyLine(record({ msg: 'engine listening', address: 'http://127.0.0.1:8641', browsers: ['chromium', 'firefox'], operator: null }))).toBe(
      '12:00:00.005 INFO  engine listening  address=http://127.0.0.1:8641 browsers=chromium,firefox operator=null\n',
    );
    const failed = record({ level: 40, levelName: 'warn', msg: 'webhook attempt failed; retrying later', reason: 'no answer', err: { message: 'connect refused', code: 'ECONNREFUSED' } });
    expect(prettyLine(failed)).toBe('12:00:00.005 WARN  webhook attempt failed; retrying later  reason="no answer" err="connect refused" (ECONNREFUSED)\n');
    expect(prettyLine(failed, { colour: true })).toContain('\x1b[33mWARN \x1b[0m webhook attempt failed');
    expect(prettyLine('not json')).toBe('not json\n');
  });

  /** The lines a logger with `pretty: null` writes into a stream that is (or is not) a terminal. */
  const written = (terminal: boolean) => {
    const out = Object.assign(new PassThrough(), terminal ? { isTTY: true } : {});
    const lines: string[] = [];
    out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    const log = createLogger({ level: 'info', pretty: null }, out, { node: 'n1' });
    log.info({ vmId: 'abc', key: `rbk_${'k'.repeat(43)}` }, 'session created');
    return lines;
  };

  it('writes JSON lines into a pipe, a file or a collector, and readable lines into a terminal', () => {
    const saved = process.env.RBK_LOG_PRETTY;
    delete process.env.RBK_LOG_PRETTY;
    try {
      const [json] = written(false);
      expect(JSON.parse(json!)).toMatchObject({ level: 30, levelName: 'info', node: 'n1', vmId: 'abc', key: '[redacted]', msg: 'session created' });
      const [line] = written(true);
      expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} \S*INFO \S* session created  vmId=abc key=\[redacted\]$/);
      // RBK_LOG_PRETTY forces either where the configuration leaves it open.
      process.env.RBK_LOG_PRETTY = '1';
      expect(written(false)[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  session created/);
      process.env.RBK_LOG_PRETTY = '0';
      expect(JSON.parse(written(true)[0]!)).toMatchObject({ msg: 'session created' });
    } finally {
      if (saved === undefined) delete process.env.RBK_LOG_PRETTY;
      else process.env.RBK_LOG_PRETTY = saved;
    }
  });

  it('holds lines until released, then writes them in order and lets the rest through', () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    const held = holdLines(out);
    expect(held.isTTY).toBe(false);
    const log = createLogger({ level: 'info', pretty: false }, held);
    log.info('first');
    log.warn('second');
    expect(lines).toEqual([]);
    held.release();
    log.info('third');
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['first', 'second', 'third']);
    expect(holdLines(Object.assign(new PassThrough(), { isTTY: true })).isTTY).toBe(true);
  });
});

describe('the webhook retry schedule', () => {
  const settings = { firstRetryMs: 10_000, retryForMs: 86_400_000 };
  it('waits 10 s, then three times longer each time, at most an hour, for a day', () => {
    const created = 0;
    expect(nextAttemptAt(settings, created, 1, 0)).toBe(10_000);
    expect(nextAttemptAt(settings, created, 2, 0)).toBe(30_000);
    expect(nextAttemptAt(settings, created, 3, 0)).toBe(90_000);
    expect(nextAttemptAt(settings, created, 9, 0)).toBe(3_600_000);
    expect(nextAttemptAt(settings, created, 30, 86_000_000)).toBeNull();
  });
});
