// The engine's structured logs (decisions.md 60): pino, one JSON object per line on stderr (stdout
// stays the command's own output, such as `serve --json`'s ready line), or short readable lines
// when stderr is a terminal. Secrets never reach a line: fields that carry them are redacted by
// name, and a last pass masks API keys, Bearer tokens and share-link ids in any text.
import { Writable } from 'node:stream';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export interface LogSettings {
  level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Readable lines instead of JSON; null: when the destination is a terminal. */
  pretty: boolean | null;
}

/** Field names whose values are credentials, wherever they appear (two levels deep). */
const SECRET_FIELDS = ['authorization', 'cookie', 'key', 'apiKey', 'api_key', 'secret', 'token', 'linkId', 'link', 'shareUrl', 'shareUrlPath', 'viewUrl', 'handle', 'password', 'browserWSEndpoint'];
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

/**
 * One readable line per record for a terminal: time, level, message, then the fields as
 * key=value. Kept here (twenty lines) rather than pino-pretty, which brings a dozen packages
 * for what an operator watching a terminal needs.
 */
export function prettyLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { time, level, levelName: _name, msg, pid: _pid, hostname: _hostname, ...fields } = record;
  const clock = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : '';
  const rest = Object.entries(fields).map(([name, value]) => `${name}=${typeof value === 'string' && !/\s/.test(value) ? value : JSON.stringify(value)}`);
  return `${clock} ${(LEVEL_NAMES[level as number] ?? String(level)).padEnd(5)} ${String(msg ?? '')}${rest.length ? `  ${rest.join(' ')}` : ''}\n`;
}

function prettyStream(target: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      target.write(prettyLine(chunk.toString('utf8')));
      done();
    },
  });
}

/**
 * The engine's logger. `destination` defaults to stderr (fd 2), written synchronously so the
 * lines of a crash are not lost; tests pass a stream of their own to read every line.
 */
export function createLogger(settings: LogSettings, destination?: DestinationStream | NodeJS.WritableStream, bindings: Record<string, unknown> = {}): Logger {
  const target = destination ?? pino.destination({ fd: 2, sync: true });
  const pretty = settings.pretty ?? (destination === undefined && process.stderr.isTTY === true);
  const options: LoggerOptions = {
    level: settings.level,
    base: { node: bindings.node, pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Errors keep their message and code, never their stack (paths of this host) at info.
    serializers: { err: (error: Error & { code?: string }) => ({ message: scrubSecrets(String(error?.message ?? error)), ...(error?.code ? { code: error.code } : {}) }) },
    hooks: { streamWrite: scrubSecrets },
    formatters: { level: (label, number) => ({ level: number, levelName: label }) },
  };
  return pino(options, pretty ? prettyStream(target as NodeJS.WritableStream) : (target as DestinationStream));
}

/** A logger that writes nothing (`log.level: "silent"`, and parts used without an engine). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
