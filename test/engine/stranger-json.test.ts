// The one reader of a stranger's JSON (limits/stranger-json.ts): a message too long, nested too
// deep, of too many arrays and objects, not JSON or not an object is refused with why, before
// JSON.parse builds it; strings that hold brackets do not count.
import { describe, expect, it } from 'vitest';
import { nestingDepth, readStrangerJson } from '../../src/engine/limits/stranger-json.js';

const limits = { maxLength: 1000, maxDepth: 4 };

describe('readStrangerJson', () => {
  it('reads an object within the limits', () => {
    expect(readStrangerJson('{"id":1,"params":{"a":[[1]]}}', limits)).toEqual({ ok: true, value: { id: 1, params: { a: [[1]] } } });
  });

  it('refuses what is not a JSON object, saying so', () => {
    for (const text of ['null', '7', '"x"', '[1]', '{"id":', '', '\u0000\u0001']) {
      const read = readStrangerJson(text, limits);
      expect(read.ok, text).toBe(false);
      expect(read.ok ? '' : read.why).toMatch(/not JSON|not a JSON object/);
      // Not past a limit: malformed, so no id is looked for in it.
      expect(read).not.toHaveProperty('exceeded');
    }
  });

  it('refuses a message nested deeper than allowed before parsing it, and one too long', () => {
    const deep = '{"p":' + '['.repeat(500_000) + ']'.repeat(500_000) + '}';
    expect(readStrangerJson(deep, { maxLength: 2_000_000, maxDepth: 512 })).toEqual({ ok: false, why: 'a message nested deeper than 512 levels', exceeded: true });
    expect(readStrangerJson('{"a":"' + 'x'.repeat(2000) + '"}', limits)).toEqual({ ok: false, why: expect.stringMatching(/over the 1000 allowed/), exceeded: true });
  });

  it('refuses a message of more arrays and objects than allowed, before parsing it', () => {
    const many = '{"a":[' + '[],'.repeat(4 * 1024 * 1024) + '[]]}';
    expect(readStrangerJson(many, { maxLength: 20_000_000, maxDepth: 512 })).toEqual({ ok: false, why: 'a message of more than 1000000 arrays and objects', exceeded: true });
    // The message itself, its array and three objects: five.
    expect(readStrangerJson('{"a":[{},{},{}]}', { ...limits, maxContainers: 5 })).toEqual({ ok: true, value: { a: [{}, {}, {}] } });
    expect(readStrangerJson('{"a":[{},{},{},{}]}', { ...limits, maxContainers: 5 }).ok).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(nestingDepth('{"a":"[[[[[[{{{{\\"[[[[","b":[1]}', 10)).toBe(2);
    expect(readStrangerJson('{"a":"[[[[[[[[[[[["}', limits).ok).toBe(true);
  });
});
