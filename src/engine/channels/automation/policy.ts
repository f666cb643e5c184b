// What a program may send a session's browser over DevTools (docs/security.md, "Automation").
// Applied on the node that runs the session to every command, whatever session of the connection
// it is for: an allow-list of the domains and methods a page-level client (Playwright's
// connectOverCDP, Puppeteer's connect) uses, and refusals, as DevTools errors the client reads,
// for what would reach outside the session: browser-process control, a context with its own
// proxy, files outside the session's folders (chosen or dropped), a second protocol channel past
// this filter, and addresses the engine's guard refuses to a person too.
import { posix } from 'node:path';
import { MESSAGE_DEPTH, readStrangerJson } from '../../limits/stranger-json.js';
import type { SessionFolders } from '../channel.js';

/**
 * The largest message a program sends, DevTools or BiDi (the door takes no larger: automation.ts's
 * messageBytes); a string never has more UTF-16 units than its UTF-8 bytes, so the reader's length
 * check holds it too.
 */
export const PROGRAM_MESSAGE_BYTES = 1024 * 1024;

/** How a program's message is read: at most this long and this deep, so nothing built from it overflows the stack when written out again. */
export const PROGRAM_MESSAGE_LIMITS = { maxLength: PROGRAM_MESSAGE_BYTES, maxDepth: MESSAGE_DEPTH } as const;

/** A command as DevTools clients send it (flat sessions: `sessionId` names the attached target). */
export interface DevToolsCommand {
  id: number;
  method: string;
  params?: Record<string, unknown>;
  sessionId?: string;
}

export type CommandVerdict =
  /** Goes to the browser as sent, or with `params` changed (a download folder re-pointed). */
  | { pass: true; command: DevToolsCommand }
  | { pass: false; why: string };

/** Domains a page-level client uses whole: they act on pages, frames and workers of the session only. */
const ALLOWED_DOMAINS = new Set([
  'Accessibility', 'Animation', 'Audits', 'Autofill', 'BackgroundService', 'CSS', 'CacheStorage', 'Console', 'DOM',
  'DOMDebugger', 'DOMSnapshot', 'DOMStorage', 'Debugger', 'DeviceAccess', 'Emulation', 'EventBreakpoints', 'FedCm',
  'Fetch', 'HeapProfiler', 'IO', 'IndexedDB', 'Input', 'Inspector', 'LayerTree', 'Log', 'Media', 'Network', 'Overlay',
  'Page', 'Performance', 'PerformanceTimeline', 'Preload', 'Profiler', 'Runtime', 'Schema', 'Security',
  'ServiceWorker', 'Storage', 'WebAudio', 'WebAuthn',
]);

/** Methods of the browser-wide domains that a client needs and that stay inside the session. */
const ALLOWED_METHODS = new Set([
  'Browser.getVersion', 'Browser.getWindowForTarget', 'Browser.getWindowBounds', 'Browser.setWindowBounds',
  'Browser.grantPermissions', 'Browser.resetPermissions', 'Browser.setPermission', 'Browser.cancelDownload',
  'Browser.setDownloadBehavior', 'Browser.getHistograms', 'Browser.getHistogram',
  'Target.getTargets', 'Target.getTargetInfo', 'Target.setDiscoverTargets', 'Target.setAutoAttach', 'Target.autoAttachRelated',
  'Target.attachToTarget', 'Target.attachToBrowserTarget', 'Target.detachFromTarget', 'Target.activateTarget',
  'Target.closeTarget', 'Target.createTarget', 'Target.createBrowserContext', 'Target.disposeBrowserContext',
  'Target.getBrowserContexts',
]);

/** Refusals with their reason, by method or by domain (`Domain.*`): what a client reads. */
const REFUSED: Record<string, string> = {
  'Browser.close': 'the session ends through the service (POST /v8/vm/remove), not by closing its browser',
  'Browser.crash': 'the session\'s browser is the service\'s to stop',
  'Browser.crashGpuProcess': 'the session\'s browser is the service\'s to stop',
  'Browser.executeBrowserCommand': 'browser commands act on the browser process, outside the session\'s pages',
  'Browser.getBrowserCommandLine': 'the browser\'s command line is the service\'s',
  'SystemInfo.*': 'the host\'s hardware and processes are not the session\'s',
  // Chromium writes its command line and the host's hardware, kernel and GPU into every trace's metadata.
  'Tracing.*': 'a trace carries the browser\'s command line and the host\'s hardware and kernel, which are not the session\'s',
  'Tethering.*': 'the session\'s browser opens no ports toward the service\'s host',
  'Target.sendMessageToTarget': 'it would carry commands past this filter; attach with flatten: true instead',
  'Target.exposeDevToolsProtocol': 'it would give a page the browser\'s whole protocol, past this filter',
  'Target.setRemoteLocations': 'the session\'s browser looks for no other DevTools targets',
  'Target.openDevTools': 'the developer tools are not part of a session (as for a person)',
  'Page.crash': 'the session\'s pages are the service\'s to stop',
  'Extensions.*': 'extensions would run outside the session\'s guards',
  'PWA.*': 'installing web apps reaches outside the session\'s browser',
  'Cast.*': 'the session casts to no device',
  'BluetoothEmulation.*': 'not part of a session',
  'Memory.*': 'it acts on the browser\'s processes, not on a page',
  'HeadlessExperimental.*': 'the session\'s browser is not headless',
  'Storage.setStorageBucketTracking': 'not part of a session',
};

/** Addresses a program may open: what the engine's guard lets a person open (runtime/browser/control.ts). */
const ALLOWED_PAGE = /^(https?:|about:blank$|data:|blob:)/i;
const NEW_TAB_PAGE = /^chrome(-search)?:\/\/(newtab|new-tab-page|new-tab-page-third-party)\/?$/i;

/** Playwright's connectOverCDP names a fresh folder of the client's own machine for downloads; it means nothing in the session. */
const PLAYWRIGHT_ARTIFACTS = /\/playwright-artifacts-[A-Za-z0-9]{6}$/;

function refusedReason(method: string): string | undefined {
  return REFUSED[method] ?? REFUSED[`${method.split('.')[0]}.*`];
}

function isInside(path: string, folder: string): boolean {
  if (!path.startsWith('/')) return false;
  const normal = posix.normalize(path);
  return normal === folder || normal.startsWith(`${folder}/`);
}

/**
 * The first of `files` that is not inside the session's downloads or uploads folder, if any: the
 * one rule for every command that hands the page files by path (a file chooser's answer, a drop).
 */
function fileOutsideSessionFolders(files: unknown, folders: SessionFolders): unknown {
  const list = Array.isArray(files) ? files : [];
  return list.find((file) => !(typeof file === 'string' && (isInside(file, folders.downloads) || isInside(file, folders.uploads))));
}

function openable(url: unknown): boolean {
  return typeof url === 'string' && (url === '' || ALLOWED_PAGE.test(url) || NEW_TAB_PAGE.test(url));
}

/**
 * The verdict on one command: passed (perhaps re-pointed), or refused with why. `isEngineTarget`
 * names the engine's own DevTools connections (the guard's target: engine-targets.ts hides it).
 */
export function judgeCommand(command: DevToolsCommand, folders: SessionFolders, isEngineTarget: (targetId: string) => boolean = () => false): CommandVerdict {
  const { method } = command;
  const params = command.params ?? {};
  const refused = refusedReason(method);
  if (refused) return { pass: false, why: refused };
  const domain = method.split('.')[0]!;
  if (!ALLOWED_DOMAINS.has(domain) && !ALLOWED_METHODS.has(method)) {
    return { pass: false, why: 'it is not on the list of methods a program may use (docs/security.md, "Automation")' };
  }
  if (typeof params.targetId === 'string' && isEngineTarget(params.targetId)) {
    return { pass: false, why: 'that target is the engine\'s own DevTools connection (the session\'s guard), not part of the session' };
  }
  switch (method) {
    case 'Target.createBrowserContext':
      if (params.proxyServer !== undefined || params.proxyBypassList !== undefined) {
        return { pass: false, why: 'every request of a session leaves through the session\'s own egress route; a context cannot have a proxy of its own' };
      }
      break;
    case 'Target.attachToTarget':
      if (params.flatten !== true) return { pass: false, why: 'only flat sessions (flatten: true) are carried, so that every command passes this filter' };
      break;
    case 'Target.setAutoAttach':
      if (params.flatten !== true) return { pass: false, why: 'only flat sessions (flatten: true) are carried, so that every command passes this filter' };
      break;
    case 'Target.createTarget':
    case 'Page.navigate':
      if (!openable(params.url)) return { pass: false, why: `${String(params.url).slice(0, 60)} is not an address a session opens: only http and https pages (as for a person)` };
      break;
    case 'Fetch.continueRequest':
      if (params.url !== undefined && !(typeof params.url === 'string' && /^https?:/i.test(params.url))) {
        return { pass: false, why: 'a request can only be sent on to an http or https address' };
      }
      break;
    case 'Network.loadNetworkResource':
      if (!(typeof params.url === 'string' && /^https?:/i.test(params.url))) return { pass: false, why: 'only http and https resources are loaded' };
      break;
    case 'Browser.setDownloadBehavior':
    case 'Page.setDownloadBehavior': {
      const path = params.downloadPath;
      if (path === undefined || isInside(String(path), folders.downloads)) break;
      // Playwright's own temporary folder (its default, never the program's choice): the session's downloads folder instead.
      if (typeof path === 'string' && PLAYWRIGHT_ARTIFACTS.test(path)) return { pass: true, command: { ...command, params: { ...params, downloadPath: folders.downloads } } };
      return { pass: false, why: `downloads stay in the session's folder ${folders.downloads}` };
    }
    case 'DOM.setFileInputFiles': {
      const outside = fileOutsideSessionFolders(params.files, folders);
      if (outside !== undefined) return { pass: false, why: `files are chosen from the session's folders ${folders.downloads} and ${folders.uploads} only, not ${String(outside).slice(0, 80)}` };
      break;
    }
    case 'Input.dispatchDragEvent': {
      // A drop hands the page the files it carries, read by the browser: the same folders as a file chooser.
      const data = params.data;
      const files = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).files : undefined;
      const outside = fileOutsideSessionFolders(files, folders);
      if (outside !== undefined) return { pass: false, why: `a drag carries files from the session's folders ${folders.downloads} and ${folders.uploads} only, not ${String(outside).slice(0, 80)}` };
      break;
    }
  }
  return { pass: true, command };
}

/** The DevTools error a client reads for a refused command (its id and session, so the client routes it to the caller). */
export function refusal(command: Pick<DevToolsCommand, 'id' | 'method' | 'sessionId'>, why: string): string {
  return JSON.stringify({
    id: command.id,
    error: { code: -32000, message: `${command.method} is not allowed in remote-browser-kit sessions: ${why}` },
    ...(command.sessionId === undefined ? {} : { sessionId: command.sessionId }),
  });
}

/**
 * Reads a client's message as a command; undefined when it is not one (the connection is then
 * closed). One nested deeper than MESSAGE_DEPTH is not read at all: a copy of it (judgeCommand
 * re-points some) would overflow the stack when written out again.
 */
export function parseCommand(text: string): DevToolsCommand | undefined {
  const read = readStrangerJson(text, PROGRAM_MESSAGE_LIMITS);
  if (!read.ok) return undefined;
  const value = read.value;
  const { id, method, params, sessionId } = value;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || typeof method !== 'string' || !/^[A-Za-z]+\.[A-Za-z]+$/.test(method)) return undefined;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return undefined;
  if (sessionId !== undefined && typeof sessionId !== 'string') return undefined;
  return value as unknown as DevToolsCommand;
}
