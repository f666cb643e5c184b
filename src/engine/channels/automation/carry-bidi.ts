// The automation channel's way for a Firefox session (issue 45, decisions.md 143): a program's
// WebSocket joined to a new WebSocket of its own to the session's remote agent (`/session`, through
// the relay inside the session: SessionBiDi.url), every command passing the BiDi policy
// (bidi-policy.ts) and, under `control: "one"`, the program's hands waiting their turn
// (bidi-control.ts). Firefox's agent holds one BiDi session at a time: a second program's
// `session.new`, or any program's while the engine holds it (an app window's tabs), is answered
// with a BiDi error saying so.
import { WebSocket } from 'ws';
import type { CloseReason, SessionBiDi } from '../channel.js';
import { VIEWER_CLOSE } from '../close-codes.js';
import { bidiMalformed, bidiRefusal, judgeBiDiCommand, parseBiDiCommand } from './bidi-policy.js';
import type { BiDiProgramControl } from './bidi-control.js';

/** Messages a program may send before the browser end is open (they wait, in order). */
const WAITING_LIMIT = 256;

const BROWSER_GONE: CloseReason = { code: 4003, reason: 'the session\'s browser closed its WebDriver BiDi connection' };

/** Firefox's words when its one BiDi session is taken. */
const TAKEN = /Maximum number of active sessions/;

export function carryBiDi(program: WebSocket, bidi: SessionBiDi, joinControl?: (send: (text: string) => void) => Promise<BiDiProgramControl>): Promise<void> {
  return new Promise<void>((resolve) => {
    const control: Promise<BiDiProgramControl | undefined> = joinControl
      ? joinControl((text) => program.readyState === WebSocket.OPEN && program.send(text)).catch(() => undefined)
      : Promise.resolve(undefined);
    // Firefox's agent takes only its own address as the Host header; through the relay it would be the socket's.
    const browser = new WebSocket(bidi.url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024, headers: { host: bidi.host } });
    const waiting: string[] = [];
    /** Ids of the program's session.new commands still unanswered: a "taken" answer to one is explained. */
    const opening = new Set<number>();
    const ending = new Set<number>();
    /** Whether the program holds the agent's BiDi session (answered session.new, no session.end since). */
    let holds = false;
    let done = false;
    const finish = (close: CloseReason) => {
      if (done) return;
      done = true;
      void control.then((joined) => joined?.leave());
      leaveAgent(browser, holds);
      if (program.readyState === WebSocket.OPEN || program.readyState === WebSocket.CONNECTING) program.close(close.code, close.reason);
      resolve();
    };
    const toBrowser = (text: string) => {
      if (browser.readyState === WebSocket.OPEN) browser.send(text);
      else if (waiting.length < WAITING_LIMIT) waiting.push(text);
      else finish(VIEWER_CLOSE.busy);
    };
    const answer = (text: string) => program.readyState === WebSocket.OPEN && program.send(text);
    program.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => void control.then((joined) => {
      if (done) return;
      const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8');
      const command = parseBiDiCommand(text);
      if (!command) return void answer(bidiMalformed(text));
      const answered = joined?.intercept(command);
      if (answered) return void answer(answered);
      const verdict = judgeBiDiCommand(command, bidi.folders);
      if (!verdict.pass) return void answer(bidiRefusal(command, verdict.error, verdict.why));
      if (command.method === 'session.new') {
        if (bidi.engineHolds()) {
          return void answer(bidiRefusal(command, 'session not created', 'the engine holds this Firefox\'s one WebDriver BiDi session (the tabs of an app window); programs drive Firefox sessions in a browser window'));
        }
        opening.add(command.id);
      }
      if (command.method === 'session.end') ending.add(command.id);
      toBrowser(text);
    }));
    browser.on('open', () => {
      for (const text of waiting.splice(0)) browser.send(text);
    });
    browser.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
      if (program.readyState !== WebSocket.OPEN) return;
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) return void program.send(bytes);
      const text = bytes.toString('utf8');
      const said = opening.size === 0 && ending.size === 0 ? text : explained(text, opening, ending, (held) => (holds = held));
      program.send(said);
    });
    browser.on('close', () => finish(BROWSER_GONE));
    browser.on('error', () => finish(BROWSER_GONE));
    program.on('close', () => finish({ code: 1000, reason: 'the program left' }));
    program.on('error', () => finish({ code: 1011, reason: 'the program\'s connection failed' }));
  });
}

/** How long the engine waits for Firefox to end a leaving program's BiDi session before it cuts the connection. */
const END_SESSION_MS = 2000;
/** The id of the engine's own session.end on a leaving program's connection (the program is gone: no id of its can clash). */
const END_SESSION_ID = 2 ** 31;

/**
 * Closes the program's connection to the agent. A BiDi session the program left open is ended
 * first: Firefox keeps it past the connection's end otherwise (measured on 153.8.0esr), and it is
 * the agent's only one, so no later program could open its own.
 */
function leaveAgent(browser: WebSocket, holds: boolean): void {
  if (!holds || browser.readyState !== WebSocket.OPEN) return void browser.terminate();
  const timer = setTimeout(() => browser.terminate(), END_SESSION_MS);
  browser.on('message', (data: Buffer) => {
    if (String(data).includes(`"id":${END_SESSION_ID}`)) {
      clearTimeout(timer);
      browser.close();
    }
  });
  browser.once('close', () => clearTimeout(timer));
  browser.send(JSON.stringify({ id: END_SESSION_ID, method: 'session.end', params: {} }));
}

/**
 * Reads the browser's answer to a pending session.new or session.end: whether the program holds
 * the agent's session now (`held`), and Firefox's "taken" error said in the service's words.
 */
function explained(text: string, opening: Set<number>, ending: Set<number>, held: (holds: boolean) => void): string {
  let message: { id?: unknown; type?: unknown; error?: unknown; message?: unknown };
  try {
    message = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof message.id !== 'number') return text;
  if (ending.delete(message.id)) {
    if (message.type === 'success') held(false);
    return text;
  }
  if (!opening.delete(message.id)) return text;
  if (message.type === 'success') held(true);
  if (message.type !== 'error' || typeof message.message !== 'string' || !TAKEN.test(message.message)) return text;
  return bidiRefusal({ id: message.id, method: 'session.new' }, 'session not created', 'another program drives this session now: Firefox\'s remote agent holds one WebDriver BiDi session at a time; connect again once it has left');
}
