// Billing cycles (decisions.md 13) and the checked-in OpenAPI document.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { currentCycle, parseDay } from '../../src/protocol/cycle.js';
import { openApiDocument } from '../../src/engine/http/openapi.js';
import { controlRequestSchema, parseControlAction } from '../../src/protocol/index.js';

const at = (iso: string) => Date.parse(iso);

describe('billing cycles', () => {
  it('start on the anchor day each month', () => {
    expect(currentCycle('2026-01-15', at('2026-03-20T10:00:00Z')).start).toBe('2026-03-15');
    expect(currentCycle('2026-01-15', at('2026-03-14T23:59:59Z')).start).toBe('2026-02-15');
    expect(currentCycle('2026-01-15', at('2026-03-15T00:00:00Z')).start).toBe('2026-03-15');
  });

  it('clamp the day to the last day of short months and keep it afterwards', () => {
    expect(currentCycle('2026-01-31', at('2026-02-28T12:00:00Z')).start).toBe('2026-02-28');
    expect(currentCycle('2026-01-31', at('2026-03-30T12:00:00Z')).start).toBe('2026-02-28');
    expect(currentCycle('2026-01-31', at('2026-03-30T12:00:00Z')).end).toBe('2026-03-31');
    expect(currentCycle('2026-01-31', at('2026-03-31T00:00:00Z')).start).toBe('2026-03-31');
    expect(currentCycle('2024-01-31', at('2024-02-29T12:00:00Z')).start).toBe('2024-02-29');
  });

  it('roll over the year and end one month after they start', () => {
    const cycle = currentCycle('2025-11-30', at('2026-01-05T00:00:00Z'));
    expect(cycle.start).toBe('2025-12-30');
    expect(cycle.end).toBe('2026-01-30');
    expect(new Date(cycle.endMs).toISOString().slice(0, 10)).toBe('2026-01-30');
  });

  it('is the first cycle before the anchor day comes', () => {
    expect(currentCycle('2026-12-01', at('2026-11-21T00:00:00Z')).start).toBe('2026-12-01');
    expect(currentCycle('2026-12-01', at('2026-11-21T00:00:00Z')).end).toBe('2027-01-01');
  });

  it('refuses dates that do not exist', () => {
    expect(() => parseDay('2026-02-30')).toThrow(/YYYY-MM-DD/);
    expect(() => parseDay('yesterday')).toThrow(/YYYY-MM-DD/);
  });
});

describe('the OpenAPI document', () => {
  it('checked in under docs/ matches the schemas (run `npm run openapi` after changing them)', () => {
    const checkedIn = JSON.parse(readFileSync('docs/openapi.json', 'utf8'));
    expect(checkedIn).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(Object.keys(checkedIn.paths)).toEqual(['/v8/image', '/v8/vm/create', '/v8/vm/data', '/v8/vm/remove', '/v8/vm/automation', '/v8/vm/files', '/v8/vm/files/download', '/v8/vm/files/upload', '/v8/vm/recording', '/v8/vm/recording/media', '/v8/vm/recording/remove', '/v8/vm/recording/link', '/v8/vm/control', '/v8/vm/viewer', '/v8/profile/create', '/v8/profile/data', '/v8/profile/rename', '/v8/profile/remove', '/v8/user/api', '/v8/user/quota', '/v8/user/embed', '/v8/user/webhook']);
  });

  it("describes vm/control's body as the engine reads it (parseControlAction)", () => {
    const bodies: Record<string, unknown>[] = [
      { action: 'take' }, { action: 'release' }, { action: 'give', to: 'p3' }, { action: 'mode', mode: 'one' }, { action: 'mode', mode: 'shared' },
      { action: 'give' }, { action: 'give', to: '' }, { action: 'give', to: 'x'.repeat(65) }, { action: 'mode', mode: 'two' }, { action: 'drive' }, {},
    ];
    for (const body of bodies) {
      expect(controlRequestSchema.safeParse({ id: 'vm1', ...body }).success, JSON.stringify(body)).toBe(parseControlAction(body).ok);
    }
  });
});
