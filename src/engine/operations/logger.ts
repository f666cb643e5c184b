// The engine's structured logs (decisions.md 60, 84): pino, one JSON object per line on stderr
// (stdout stays the command's own output, such as `serve --json`'s ready line), or short readable
// lines when stderr is a terminal. Secrets never reach a line: fields that carry them are redacted
// by name, and a last pass masks API keys, Bearer tokens and share-link ids in any text.
import { Writable } from 'node:stream';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export interface LogSettings {
  level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Readable lines instead of JSON; null: when the destination is a terminal. */
  pretty: boolean | null;
}

/** Field names whose values are credentials, wherever they appear (two levels deep). */
const SECRET_FIELDS = ['authorization', 'cookie', 'key', 'apiKey', 'api_key', 'secret', 'token', 'linkId', 'link', 'shareUrl', 'shareUrlPath', 'viewUrl', 'handle', 'password', 'browserWSEndpoint', 'webDriverBiDiEndpoint'];
export const REDACTED_PATHS = [...SECRET_FIELDS, ...SECRET_FIELDS.map((field) => `*.${field}`), ...SECRET_FIELDS.map((field) => `*.*.${field}`)];

/**
 * Credentials in free text (an error's message, a path): API keys (`rbk_` and 43 base64url
 * characters), Bearer tokens, the query of a share link (`/s?<link id>`), automation tokens.
 */
const SECRET_TEXT: ReadonlyArray<[RegExp, string]> = [
  [/rbk_[A-Za-z0-9_-]{20,}/g, 'rbk_[redacted]'],
  [/(Bearer\s+)[^\s"\\]+/gi, '$1[redacted]'],
  [/(\/s\?)[A-Za-z0-9_-]{8,}/g, '$1[redacted]'],
  [/(\/share\/)[A-Za-z0-9_-]{8,}/g, '$1[redacted]'],
  [/(\/automation\/)[^\s"\\/?]+/g, '$1[redacted]'],
  [/(\/internal\/v1\/sessions\/[0-9a-f]{32}\/channels\/[a-z0-9-]+\/)[^\s"\\]+/g, '$1[redacted]'],
];

export function scrubSecrets(text: string): string {
  let scrubbed = text;
  for (const [pattern, replacement] of SECRET_TEXT) scrubbed = scrubbed.replace(pattern, replacement);
  return scrubbed;
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** ANSI colours of the level on a colour terminal: what needs a look stands out. */
const LEVEL_COLOURS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '31' };

const two = (n: number) => String(n).padStart(2, '0');
const shown = (value: unknown): string => {
  if (typeof value === 'string') return value !== '' && !/[\s"=]/.test(value) ? value : JSON.stringify(value);
  if (Array.isArray(value) && value.every((item) => item === null || typeof item !== 'object')) return value.map(String).join(',');
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
};

/**
 * One readable line per record for a terminal: the local time, the level, the message, then the
 * record's own fields as key=value (vmId, account, start, startMs...); `node` and `pid` are left
 * out (one process per terminal), an error shows its message and code. Kept here rather than
 * pino-pretty, which brings a dozen packages for what an operator watching a terminal needs.
 */
export function prettyLine(json: string, options: { colour?: boolean } = {}): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const { time, level, levelName: _name, msg, pid: _pid, hostname: _hostname, node: _node, err, ...fields } = record;
  const at = typeof time === 'number' ? new Date(time) : null;
  const clock = at ? `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}.${String(at.getMilliseconds()).padStart(3, '0')}` : '--:--:--.---';
  const label = (LEVEL_NAMES[level as number] ?? String(level)).padEnd(5);
  const colour = options.colour ? LEVEL_COLOURS[level as number] : undefined;
  const rest = Object.entries(fields).map(([name, value]) => `${name}=${shown(value)}`);
  if (err && typeof err === 'object') {
    const { message, code } = err as { message?: unknown; code?: unknown };
    rest.push(`err=${shown(String(message ?? ''))}${code ? ` (${String(code)})` : ''}`);
  } else if (err !== undefined) rest.push(`err=${shown(err)}`);
  return `${clock} ${colour ? `\x1b[${colour}m${label}\x1b[0m` : label} ${String(msg ?? '')}${rest.length ? `  ${rest.join(' ')}` : ''}\n`;
}

function prettyStream(target: NodeJS.WritableStream, colour: boolean): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const lines = chunk.toString('utf8').split('\n').filter(Boolean);
      target.write(lines.map((line) => prettyLine(line, { colour })).join(''));
      done();
    },
  });
}

/** Whether the log's destination is a terminal: stderr by default, else the stream's own `isTTY`. */
function isTerminal(destination: DestinationStream | NodeJS.WritableStream | undefined): boolean {
  return destination === undefined ? process.stderr.isTTY === true : (destination as { isTTY?: boolean }).isTTY === true;
}

/** `RBK_LOG_PRETTY=1|true` or `0|false` forces a format where the configuration leaves it open (`npm start | tee`). */
function prettyFromEnvironment(): boolean | null {
  const value = process.env.RBK_LOG_PRETTY?.trim().toLowerCase();
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return null;
}

/**
 * The engine's logger. `destination` defaults to stderr (fd 2), written synchronously so the
 * lines of a crash are not lost; tests pass a stream of their own to read every line. Readable
 * lines when `settings.pretty`; when it is null, `RBK_LOG_PRETTY` decides, else whether the
 * destination is a terminal (a stream with `isTTY`): JSON lines into a pipe, a file, a collector.
 */
export function createLogger(settings: LogSettings, destination?: DestinationStream | NodeJS.WritableStream, bindings: Record<string, unknown> = {}): Logger {
  const target = destination ?? pino.destination({ fd: 2, sync: true });
  const terminal = isTerminal(destination);
  const pretty = settings.pretty ?? prettyFromEnvironment() ?? terminal;
  const options: LoggerOptions = {
    level: settings.level,
    base: { node: bindings.node, pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Errors keep their message and code, never their stack (paths of this host) at info.
    serializers: { err: (error: Error & { code?: string }) => ({ message: scrubSecrets(String(error?.message ?? error)), ...(error?.code ? { code: error.code } : {}) }) },
    hooks: { streamWrite: scrubSecrets },
    formatters: { level: (label, number) => ({ level: number, levelName: label }) },
  };
  const colour = terminal && !process.env.NO_COLOR;
  return pino(options, pretty ? prettyStream(target as NodeJS.WritableStream, colour) : (target as DestinationStream));
}

/** A log destination that keeps its lines until `release()`; see `holdLines`. */
export interface HeldLines extends NodeJS.WritableStream {
  /** Whether the destination behind is a terminal (the logger's format follows it). */
  readonly isTTY: boolean;
  /** Writes what was kept, in order; every later line goes straight through. */
  release(): void;
}

/**
 * Keeps the log's lines back until `release()`: the demo prints its address first, and the
 * engine's start-up lines follow it instead of burying it. `target` defaults to stderr.
 */
export function holdLines(target?: NodeJS.WritableStream): HeldLines {
  const out: { write(text: string): unknown } = target ?? pino.destination({ fd: 2, sync: true });
  let kept: string[] | null = [];
  const held = new Writable({
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, done) {
      const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      if (kept) kept.push(text);
      else out.write(text);
      done();
    },
  });
  return Object.assign(held, {
    isTTY: isTerminal(target),
    release() {
      if (!kept) return;
      const lines = kept;
      kept = null;
      for (const text of lines) out.write(text);
    },
  });
}

/** A logger that writes nothing (`log.level: "silent"`, and parts used without an engine). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
