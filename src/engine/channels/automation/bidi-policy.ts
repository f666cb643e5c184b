// What a program may send a Firefox session's browser over WebDriver BiDi (decisions.md 143;
// docs/security.md, "Automation"): the BiDi counterpart of policy.ts, applied on the node that runs
// the session to every command. An allow-list of the modules a BiDi client (Puppeteer's Firefox
// support, Selenium's BiDi) uses, and refusals, as BiDi errors the client reads, for what would
// reach outside the session: closing the browser, extensions, a user context or session with a
// proxy of its own, addresses a person may not open (file:, the about: pages that change the
// browser), and files or downloads outside the session's folders. What passes goes to the
// browser's BiDi hub (runtime/browser/bidi-hub.ts), which refuses commands naming another client's
// ids (another program's, or in an app window the engine's tab watcher's; decisions.md 169-171).
import { posix } from 'node:path';
import { leadingId } from '../../limits/leading-id.js';
import { MESSAGE_DEPTH, readStrangerJson } from '../../limits/stranger-json.js';
import type { SessionFolders } from '../channel.js';
import { PROGRAM_MESSAGE_LIMITS } from './policy.js';

/** A command as BiDi clients send it. */
export interface BiDiCommand {
  id: number;
  method: string;
  params?: Record<string, unknown>;
}

/** The BiDi error codes a refusal uses. */
export type BiDiRefusalCode = 'unsupported operation' | 'invalid argument' | 'session not created';

export type BiDiVerdict = { pass: true } | { pass: false; error: BiDiRefusalCode; why: string };

/** Modules a BiDi client uses that act on the session's pages, realms, cookies and input only. */
const ALLOWED_MODULES = new Set(['session', 'browser', 'browsingContext', 'emulation', 'input', 'log', 'network', 'permissions', 'script', 'storage']);

/** Refusals with their reason, by method or by module (`module.*`). */
const REFUSED: Record<string, string> = {
  'browser.close': 'the session ends through the service (POST /v8/vm/remove), not by closing its browser',
  'webExtension.*': 'extensions would run outside the session\'s guards',
};

/** Addresses a program may open: what the session's policies let a person open (firefox-launcher.ts). */
const ALLOWED_PAGE = /^(https?:|data:|blob:)/i;
/** Firefox's own empty and new-tab pages; every other about: page (about:config, about:preferences, about:addons, about:debugging, about:profiles...) changes or shows the browser itself. */
const ABOUT_PAGES = /^about:(blank|newtab|home)([?#].*)?$/i;

function isInside(path: string, folder: string): boolean {
  if (!path.startsWith('/')) return false;
  const normal = posix.normalize(path);
  return normal === folder || normal.startsWith(`${folder}/`);
}

function openable(url: unknown): boolean {
  return typeof url === 'string' && (ALLOWED_PAGE.test(url) || ABOUT_PAGES.test(url));
}

function notOpenable(url: unknown): string {
  return `${String(url).slice(0, 60)} is not an address a session opens: only http and https pages (no local files, no about: pages that change the browser; as for a person)`;
}

/** Whether a capabilities request of session.new names a proxy (in alwaysMatch or any firstMatch). */
function asksForProxy(capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false;
  const { alwaysMatch, firstMatch } = capabilities as { alwaysMatch?: unknown; firstMatch?: unknown };
  const sets = [alwaysMatch, ...(Array.isArray(firstMatch) ? firstMatch : [])];
  return sets.some((set) => typeof set === 'object' && set !== null && (set as Record<string, unknown>).proxy !== undefined);
}

/** The verdict on one command: passed as sent, or refused with a BiDi error code and why. */
export function judgeBiDiCommand(command: BiDiCommand, folders: SessionFolders): BiDiVerdict {
  const { method } = command;
  const params = command.params ?? {};
  const module = method.slice(0, method.lastIndexOf('.'));
  const refused = REFUSED[method] ?? REFUSED[`${module}.*`];
  if (refused) return { pass: false, error: 'unsupported operation', why: refused };
  if (!ALLOWED_MODULES.has(module)) {
    return { pass: false, error: 'unsupported operation', why: 'it is not on the list of modules a program may use (docs/security.md, "Automation")' };
  }
  switch (method) {
    case 'session.new':
      if (asksForProxy(params.capabilities)) return { pass: false, error: 'invalid argument', why: 'every request of a session leaves through the session\'s own egress route; a session cannot have a proxy of its own' };
      break;
    case 'browser.createUserContext':
      if (params.proxy !== undefined) return { pass: false, error: 'invalid argument', why: 'every request of a session leaves through the session\'s own egress route; a user context cannot have a proxy of its own' };
      break;
    case 'browsingContext.navigate':
      if (!openable(params.url)) return { pass: false, error: 'invalid argument', why: notOpenable(params.url) };
      break;
    case 'network.continueRequest':
      if (params.url !== undefined && !(typeof params.url === 'string' && /^https?:/i.test(params.url))) {
        return { pass: false, error: 'invalid argument', why: 'a request can only be sent on to an http or https address' };
      }
      break;
    case 'input.setFiles': {
      const files = Array.isArray(params.files) ? params.files : [];
      const outside = files.find((file) => !(typeof file === 'string' && (isInside(file, folders.downloads) || isInside(file, folders.uploads))));
      if (outside !== undefined) return { pass: false, error: 'invalid argument', why: `files are chosen from the session's folders ${folders.downloads} and ${folders.uploads} only, not ${String(outside).slice(0, 80)}` };
      break;
    }
    case 'browser.setDownloadBehavior': {
      const behavior = params.downloadBehavior;
      const folder = typeof behavior === 'object' && behavior !== null ? (behavior as Record<string, unknown>).destinationFolder : undefined;
      if (folder !== undefined && !(typeof folder === 'string' && isInside(folder, folders.downloads))) {
        return { pass: false, error: 'invalid argument', why: `downloads stay in the session's folder ${folders.downloads}` };
      }
      break;
    }
  }
  return { pass: true };
}

/** The BiDi error a client reads for a refused command (its id, so the client routes it to the caller). */
export function bidiRefusal(command: Pick<BiDiCommand, 'id' | 'method'>, error: BiDiRefusalCode, why: string): string {
  return JSON.stringify({ type: 'error', id: command.id, error, message: `${command.method} is refused in remote-browser-kit sessions: ${why}` });
}

/** A program's message as read: a command, or the BiDi error it is answered with (and nothing else is done). */
export type BiDiReading = { command: BiDiCommand } | { answer: string };

/**
 * Reads a client's message, within the size the door takes and MESSAGE_DEPTH levels (a deeper one
 * is not parsed, so nothing built from it overflows the stack when the hub writes it out again).
 * Extension modules (`prefix:module`) are read, and judged.
 */
export function readBiDiCommand(text: string): BiDiReading {
  const read = readStrangerJson(text, PROGRAM_MESSAGE_LIMITS);
  if (!read.ok) return { answer: malformed(leadingId(text), read.why) };
  const { id, method, params } = read.value;
  const readableId = typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? id : null;
  if (readableId === null || typeof method !== 'string' || !/^([A-Za-z]+:)?[A-Za-z]+\.[A-Za-z]+$/.test(method)) {
    return { answer: malformed(readableId, 'a message without an integer id and a method named module.command') };
  }
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return { answer: malformed(readableId, 'params that are not an object') };
  return { command: read.value as unknown as BiDiCommand };
}

/** WebDriver BiDi's error for a message that is no command: with its id when one can be found, else null. */
function malformed(id: number | null, why: string): string {
  return JSON.stringify({
    type: 'error', id, error: 'invalid argument',
    message: `not a WebDriver BiDi command (${why}): send {"id": <integer>, "method": "<module>.<command>", "params": {...}}, at most ${MESSAGE_DEPTH} levels deep`,
  });
}

/** What a message that is no command is answered with. */
export function bidiMalformed(text: string): string {
  const reading = readBiDiCommand(text);
  return 'answer' in reading ? reading.answer : malformed(reading.command.id, 'a command its caller did not take');
}

/** Reads a client's message as a command; undefined when it is not one. */
export function parseBiDiCommand(text: string): BiDiCommand | undefined {
  const reading = readBiDiCommand(text);
  return 'command' in reading ? reading.command : undefined;
}
