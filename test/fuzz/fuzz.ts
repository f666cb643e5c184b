// Shared pieces of the fuzz suite (test/fuzz/*.test.ts): the seed (FUZZ_SEED, printed so that a
// failure can be replayed) and the run counts (FUZZ_SCALE), fast-check's assertion with the
// counterexample in the failure, junk arbitraries (strings with NUL, lone surrogates and huge
// lengths, values of the wrong type, JSON cut short, invalid UTF-8, deep nesting), a raw HTTP
// exchange that sends exact bytes and never waits on an endless event stream, and the checks that
// every answer must pass whoever answers it (security headers, no stack trace, no secret).
import fc from 'fast-check';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { expect } from 'vitest';

// ---------------------------------------------------------------------------------------------
// Seed and run counts

/** The seed of a run; each property adds its own offset, so properties draw different values. */
export const DEFAULT_SEED = 20_260_521;
export const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : DEFAULT_SEED;
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);
/** Multiplies every property's number of runs (FUZZ_SCALE=10 for a long run). */
export const SCALE = process.env.FUZZ_SCALE ? Number(process.env.FUZZ_SCALE) : 1;

export function runs(count: number): number {
  return Math.max(1, Math.round(count * SCALE));
}

/** Requests (or connections) each property sent, printed at the end of a file. */
export class Tally {
  private readonly counts = new Map<string, number>();
  add(property: string, n = 1): void {
    this.counts.set(property, (this.counts.get(property) ?? 0) + n);
  }
  get(property: string): number {
    return this.counts.get(property) ?? 0;
  }
  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }
  print(file: string, startedAt: number): void {
    const lines = [...this.counts].sort(([a], [b]) => a.localeCompare(b)).map(([name, n]) => `  ${String(n).padStart(6)}  ${name}`);
    console.log(`[fuzz] ${file}: seed ${SEED} (default ${DEFAULT_SEED}, replay with FUZZ_SEED=${SEED}), scale ${SCALE}, ${this.total()} requests in ${((Date.now() - startedAt) / 1000).toFixed(1)} s\n${lines.join('\n')}`);
  }
}

/**
 * Runs an async property with the file's seed (plus `offset`), printing the seed first; on a
 * failure fast-check's report (seed, path, counterexample, error) is the test's error.
 */
export async function fuzz<T>(name: string, offset: number, arbitrary: fc.Arbitrary<T>, numRuns: number, predicate: (value: T) => Promise<void>): Promise<void> {
  const seed = SEED + offset;
  console.log(`[fuzz] ${name}: seed ${seed}, ${numRuns} runs`);
  await fc.assert(fc.asyncProperty(arbitrary, async (value) => {
    await predicate(value);
  }), {
    seed,
    numRuns,
    // Shrinking against a live engine is slow: the run, shrinking included, stops after 5 minutes.
    endOnFailure: false,
    interruptAfterTimeLimit: 5 * 60_000,
    markInterruptAsFailure: false,
    reporter: (details) => {
      if (!details.failed) return;
      const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error([
        `${name} failed after ${details.numRuns} runs (${details.numShrinks} shrinks).`,
        `Replay: FUZZ_SEED=${SEED} (this property's seed ${seed}, path ${details.counterexamplePath}).`,
        `Counterexample: ${shorten(details.counterexample)}`,
        `Error: ${error}`,
      ].join('\n'));
    },
  });
}

/** A value as JSON, long strings and byte buffers cut, so that a counterexample can be read. */
export function shorten(value: unknown): string {
  return JSON.stringify(value, function (key, v) {
    const raw = (this as Record<string, unknown>)[key];
    if (Buffer.isBuffer(raw)) return `<${raw.length} bytes: ${JSON.stringify(raw.subarray(0, 160).toString('latin1'))}${raw.length > 160 ? '…' : ''}>`;
    if (typeof v === 'string' && v.length > 240) return `${v.slice(0, 240)}…(${v.length} characters)`;
    return v;
  });
}

// ---------------------------------------------------------------------------------------------
// Junk values

/** A lone UTF-16 surrogate: no valid Unicode text has one. */
export const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

/** Strings people and attackers send: empty, control characters, NUL, lone surrogates, every plane, huge. */
export const junkString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.oneof(loneSurrogate, fc.constantFrom('\u0000', '\u001f', '\u007f', '\ufeff', '\u202e', 'a')), maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 70_000 }).map((n) => 'x'.repeat(n)) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '', ' ', '\u0000', 'null', 'undefined', '[]', '{}', '0', '-1', '1e999', 'NaN',
      'javascript:alert(1)', 'file:///etc/passwd', 'data:text/html,<script>1</script>', 'http://', 'https://', 'http://[::1', 'ftp://example.com/',
      "' OR 1=1 --", '"; DROP TABLE sessions; --', '__proto__', 'constructor', '../../etc/passwd', '%00', '%ff%fe', '\ud800', '\udfff\ud800',
      'url_', 'url_123', 'url_00000000000', '<script>alert(1)</script>', '${7*7}', '{{7*7}}', '\r\nX-Injected: 1',
    ),
  },
);

/** A value of any JSON type but a string, including deep nesting. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  fc.integer({ min: 50, max: 3_000 }).map((depth) => {
    let value: unknown = 'x';
    for (let i = 0; i < depth; i++) value = [value];
    return value;
  }),
);

/** Absent half the time. */
export const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });

/** A field: mostly a valid value, else junk text or a value of the wrong type. */
export const field = (valid: fc.Arbitrary<unknown>) => fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: junkString }, { weight: 1, arbitrary: wrongType });

/**
 * A create request (v8 fields, docs/decisions.md 22-24): each field absent, valid, junk or of the
 * wrong type, values the plan refuses (country, egress), and extra fields such as `__proto__`.
 */
export function createBodyOf(valid: { browser: fc.Arbitrary<string>; url: fc.Arbitrary<string> }): fc.Arbitrary<Record<string, unknown>> {
  return fc.record({
    browser: field(valid.browser),
    url: maybe(field(valid.url)),
    language: maybe(field(fc.constantFrom('en', 'de', 'pt-BR', 'zh-TW', 'xx', 'EN'))),
    layout: maybe(field(fc.constantFrom('us', 'de', 'gb', 'fr', 'zz'))),
    country: maybe(field(fc.constantFrom('auto', 'us', 'us-dal', 'de-fra', 'gb', 'zz'))),
    egress: maybe(field(fc.constantFrom('residential', 'direct'))),
    shareLanguage: maybe(field(fc.constantFrom('en', 'de', 'fr', 'es', 'it', 'pt', 'ja', 'xx'))),
    callbackUrl: maybe(field(fc.oneof(fc.webUrl(), fc.constant('javascript:history.back()')))),
    idempotencyKey: maybe(field(fc.oneof(fc.string({ minLength: 1, maxLength: 128 }), fc.constant('k'.repeat(129)), fc.constant('key\u0000')))),
    extra: maybe(fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'status', 'vmId', 'quota', 'id', 'handle', 'x'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })),
  }).map(({ extra, ...fields }) => {
    const body: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) body[name] = value;
    // Own keys like "__proto__" go in as data, as JSON.parse makes them.
    for (const [name, value] of Object.entries(extra ?? {})) Object.defineProperty(body, name, { value, enumerable: true, configurable: true, writable: true });
    return body;
  });
}

/** Bytes that are never valid UTF-8 where they stand (overlong, surrogate halves, lone continuation, 0xff). */
export const INVALID_UTF8 = [[0xff], [0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x80], [0xc3], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe0, 0x80]] as const;

/**
 * The bytes of a body, from a value: its JSON (mostly), or that JSON spoilt (cut short, invalid
 * UTF-8 spliced in, a byte-order mark, raw bytes), or a body that is not the value at all.
 */
export function bodyBytes(value: fc.Arbitrary<unknown>): fc.Arbitrary<Buffer> {
  const json = value.map((v) => Buffer.from(JSON.stringify(v) ?? 'null', 'utf8'));
  return fc.oneof(
    { weight: 10, arbitrary: json },
    { weight: 2, arbitrary: fc.tuple(json, fc.nat()).map(([bytes, at]) => bytes.subarray(0, bytes.length === 0 ? 0 : at % bytes.length)) },
    {
      weight: 2,
      arbitrary: fc.tuple(json, fc.nat(), fc.constantFrom(...INVALID_UTF8)).map(([bytes, at, bad]) => {
        const cut = bytes.length === 0 ? 0 : at % bytes.length;
        return Buffer.concat([bytes.subarray(0, cut), Buffer.from(bad), bytes.subarray(cut)]);
      }),
    },
    { weight: 1, arbitrary: json.map((bytes) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes])) },
    // A raw lone surrogate escape and a raw NUL escape inside the first string.
    { weight: 1, arbitrary: fc.tuple(json, fc.constantFrom('\\ud800', '\\udfff', '\\u0000')).map(([bytes, escape]) => Buffer.from(bytes.toString('utf8').replace(/"([^"\\]*)"/, `"$1${escape}"`), 'utf8')) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean(), fc.constantFrom('[', '{"browser":')).map(([depth, balanced, open]) => {
        const close = open === '[' ? ']' : '}';
        return Buffer.from(open.repeat(depth) + (open === '[' ? '' : '1') + (balanced ? close.repeat(depth) : ''), 'utf8');
      }),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((text) => Buffer.from(text, 'utf8')) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n', 'null', '1e999999', '"text"', 'true', '[]', '{', '}', '{"a":1,}', "{'a':1}", '{"__proto__":{"browser":"chromium"}}').map((text) => Buffer.from(text, 'utf8')) },
    // Over the 64 KiB cap: just past it, or far past it.
    { weight: 1, arbitrary: fc.constantFrom(66_000, 300_000, 2_100_000).map((n) => Buffer.from(JSON.stringify({ browser: 'chromium', filler: 'f'.repeat(n) }), 'utf8')) },
  );
}

// ---------------------------------------------------------------------------------------------
// Requests

/** Characters allowed in a request target; `%` may start a valid, invalid or cut escape. */
const PATH_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&\'()*+,;=:@/%?#[]';

/** Junk for a path segment or a query, always sendable as a request target. */
export const pathJunk: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.constantFrom(...PATH_CHARS.split('')), maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 12 }).map((text) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, 'x'))),
  fc.uint8Array({ maxLength: 12 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
  fc.constantFrom('..', '.', '%2e%2e', '%2e', '%2f', '%00', '%', '%z', '%f', '%ff%fe', '%c0%af', '%ed%a0%80', '..%2f..%2fetc%2fpasswd', '//', '\\', '%5c'),
  fc.integer({ min: 2_000, max: 12_000 }).map((n) => 'a'.repeat(n)),
);

/** Header values Node lets a client send: tab, printable ASCII and Latin-1 (no CR, LF or NUL). */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 10 }),
  fc.constantFrom('', ' ', '\t', '\u00ff\u00fe', 'a'.repeat(6_000)),
);

/** Names of extra headers: tokens, some that mean something to a server. */
export const headerName: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_!#$%&\'*+.^`|~'.split('')), minLength: 1, maxLength: 16 }).map((name) => `x-${name}`),
  fc.constantFrom('accept', 'accept-encoding', 'accept-language', 'cookie', 'referer', 'user-agent', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'forwarded', 'if-none-match', 'range', 'te', 'via', 'idempotency-key'),
);

export interface Exchange {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** Send the body with Transfer-Encoding: chunked, in pieces, instead of Content-Length. */
  chunked?: boolean;
  timeoutMs?: number;
}

export interface Answer {
  http: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** Parsed body; undefined when it is not JSON (or empty). */
  json: any;
  /** An event stream: only its first event was read, then the connection was closed. */
  streamed: boolean;
}

/** One request with exact bytes, on its own connection; an event stream is read to its first event only. */
export function exchange(base: string, request: Exchange): Promise<Answer> {
  const url = new URL(base);
  const headers: Record<string, string | number> = { ...request.headers };
  // Node frames a streamed body by itself only for methods that usually carry one: say it for all.
  if (request.body !== undefined) headers[request.chunked ? 'transfer-encoding' : 'content-length'] = request.chunked ? 'chunked' : request.body.length;
  const timeoutMs = request.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (error: Error | null, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(answer!);
    };
    const req = httpRequest({ host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      const streamed = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
      const finish = () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        done(null, { http: res.statusCode ?? 0, headers: res.headers, text, json, streamed });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (streamed && Buffer.concat(chunks).includes('\n\n')) {
          finish();
          req.destroy();
        }
      });
      res.on('end', finish);
      res.on('error', (error) => done(error));
      res.on('close', () => done(new Error('the answer was cut off')));
    });
    const timer = setTimeout(() => {
      req.destroy();
      done(new Error(`no complete answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (error) => done(error));
    if (request.body === undefined) return void req.end();
    if (!request.chunked) return void req.end(request.body);
    // Three pieces of any size, as a client streaming its body would send them.
    const third = Math.ceil(request.body.length / 3);
    req.write(request.body.subarray(0, third));
    req.write(request.body.subarray(third, 2 * third));
    req.end(request.body.subarray(2 * third));
  });
}

/**
 * Bytes of the request head, near enough: Node's HTTP parser refuses a head over 16 KiB before
 * any handler sees it, with 431 and the connection closed (a client still sending sees a reset).
 */
export function headSize(request: Exchange): number {
  return request.path.length + Object.entries(request.headers ?? {}).reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);
}

export function describeExchange(request: Exchange): string {
  const body = request.body === undefined ? '' : ` body(${request.body.length} B${request.chunked ? ', chunked' : ''}): ${JSON.stringify(request.body.subarray(0, 200).toString('latin1'))}`;
  return `${request.method} ${request.path.length > 300 ? `${request.path.slice(0, 300)}…(${request.path.length})` : request.path} headers ${JSON.stringify(request.headers ?? {}).slice(0, 600)}${body}`;
}

export function describeAnswer(answer: Answer): string {
  return `HTTP ${answer.http} ${JSON.stringify(answer.headers).slice(0, 400)} ${answer.text.slice(0, 400)}`;
}

// ---------------------------------------------------------------------------------------------
// What every answer must be

/** The security headers of src/http/headers.ts; Cache-Control no-store unless the answer may be cached. */
export function expectSecurityHeaders(answer: Answer, context: string, options: { cacheable?: boolean } = {}): void {
  expect(answer.headers['x-content-type-options'], `${context}: X-Content-Type-Options`).toBe('nosniff');
  expect(answer.headers['referrer-policy'], `${context}: Referrer-Policy`).toBe('no-referrer');
  if (!options.cacheable) expect(answer.headers['cache-control'], `${context}: Cache-Control`).toBe('no-store');
}

/** A JSON answer: the right content type and a body that parses. */
export function expectJson(answer: Answer, context: string): void {
  expect(answer.headers['content-type'], `${context}: Content-Type`).toMatch(/^application\/json/);
  expect(answer.json, `${context}: the body is not JSON`).toBeDefined();
}

/** Nothing an answer may carry: stack traces, file paths of the code, the given secrets. */
export function expectNothingLeaked(answer: Answer, context: string, secrets: readonly string[]): void {
  const all = `${JSON.stringify(answer.headers)}\n${answer.text}`;
  expect(all, `${context}: a stack trace`).not.toMatch(/\n\s+at |node:internal|\/src\/(engine|server|http)\/|\.ts:\d+:\d+/);
  for (const secret of secrets) expect(all.includes(secret), `${context}: a secret in the answer`).toBe(false);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
