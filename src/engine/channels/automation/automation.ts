// The automation channel: a program drives the session's browser over DevTools (Playwright's
// connectOverCDP, Puppeteer's connect) while people watch; a Firefox session's over WebDriver BiDi
// instead (carry-bidi.ts, decisions.md 143), through the same door, seats and presence. Opened with an API key (the HTTP API
// hands out a short-lived token for it: tokens.ts); counted as a program by presence,
// so an attached program keeps the session from going idle. Its end is a new browser-level
// DevTools connection made for each program through a relay inside the session (the address the
// runtime keeps: `ws+unix:` to the engine's own socket when confined, never a host TCP port).
// Every command passes the policy (policy.ts) on the node that runs the session; a
// refused one is answered with a DevTools error and goes no further.
import { WebSocket } from 'ws';
import { EngineTargetView, type FromBrowser } from './engine-targets.js';
import { judgeCommand, parseCommand, PROGRAM_MESSAGE_BYTES, refusal } from './policy.js';
import type { Channel, CloseReason, SessionDevTools } from '../channel.js';
import { VIEWER_CLOSE } from '../close-codes.js';
import type { NodeDriving } from '../control/node-driving.js';
import { programControl, type ProgramControl } from './program-control.js';
import { bidiControl } from './bidi-control.js';
import { carryBiDi, PROGRAM_FAILED } from './carry-bidi.js';
import { drivenByPrograms } from './tokens.js';

export interface AutomationChannelOptions {
  /** The family of a session's browser image (Chromium's sessions offer DevTools to programs, Firefox's WebDriver BiDi); undefined for an image this node does not know. */
  familyOf?: (browser: string) => string | undefined;
  /** Programs per session on this node (each holds a DevTools connection into the session). */
  programsPerSession?: number;
  /** Who drives each session (issue 36): a program is a driver in `one` mode (program-control.ts). */
  driving?: NodeDriving;
}

export const DEFAULT_PROGRAMS_PER_SESSION = 4;

export const AUTOMATION_CLOSE = {
  browserGone: { code: 4003, reason: 'the session\'s browser closed its DevTools connection' },
  notDevTools: { code: 4004, reason: 'the program sent something that is not a DevTools command' },
  /** The engine's own words when the browser end is neither (never expected of a running session). */
  noEnd: { code: 4005, reason: 'the session\'s browser has no end a program drives' },
  /** The browser's end of this program's connection said what the engine could not read: this connection ends, the session goes on. */
  unreadable: { code: 4009, reason: 'the session\'s browser sent what the service could not read' },
} as const satisfies Record<string, CloseReason>;

/** Messages a program may send before the browser end is open (they wait, in order). */
const WAITING_LIMIT = 256;

export function automationChannel(options: AutomationChannelOptions = {}): Channel {
  const limit = options.programsPerSession ?? DEFAULT_PROGRAMS_PER_SESSION;
  return {
    name: 'automation',
    opensWith: ['api-key'],
    attachment: 'program',
    closes: { endClosed: AUTOMATION_CLOSE.browserGone, refused: AUTOMATION_CLOSE.notDevTools },
    // Chromium's and Firefox's sessions, as http/automation.ts says before it hands out an address.
    offered: (row) => drivenByPrograms(options.familyOf?.(row.browser)),
    // DevTools and BiDi are carried as messages (carry, below); the opener only says the session has such an end here.
    openEnd: (session) => (session.devtools || session.bidi ? () => {
      throw new Error('the automation channel carries DevTools or BiDi messages, not a byte stream');
    } : undefined),
    // Opened with an API key only (control); the program's WebSocket and its DevTools (or BiDi) connection into the session: two files.
    needs: { seats: { control: limit, view: 0 }, files: 2, messageBytes: PROGRAM_MESSAGE_BYTES },
    carry: ({ socket, ends, sessionId }) => {
      const { driving } = options;
      if (ends?.devtools) return carryProgram(socket, ends.devtools, driving ? (send) => programControl(driving, sessionId, send) : undefined);
      if (ends?.bidi) return carryBiDi(socket, ends.bidi, driving ? (send) => bidiControl(driving, sessionId, send) : undefined);
      socket.close(AUTOMATION_CLOSE.noEnd.code, AUTOMATION_CLOSE.noEnd.reason);
      return Promise.resolve();
    },
    close() {},
  };
}

/** Joins a program's WebSocket to a new DevTools connection into the session, through the policy. */
function carryProgram(program: WebSocket, devtools: SessionDevTools, joinControl?: (send: (text: string) => void) => Promise<ProgramControl>): Promise<void> {
  return new Promise<void>((resolve) => {
    // Joined while the first messages may already come: each waits for it, in order.
    const control: Promise<ProgramControl | undefined> = joinControl
      ? joinControl((text) => program.readyState === WebSocket.OPEN && program.send(text)).catch(() => undefined)
      : Promise.resolve(undefined);
    const browser = new WebSocket(devtools.url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    const waiting: string[] = [];
    const engineTargets = new EngineTargetView(devtools.isEngineTarget);
    let done = false;
    const finish = (close: CloseReason) => {
      if (done) return;
      done = true;
      void control.then((joined) => joined?.leave());
      browser.terminate();
      if (program.readyState === WebSocket.OPEN || program.readyState === WebSocket.CONNECTING) program.close(close.code, close.reason);
      resolve();
    };
    const toBrowser = (text: string) => {
      if (browser.readyState === WebSocket.OPEN) browser.send(text);
      else if (waiting.length < WAITING_LIMIT) waiting.push(text);
      else finish(VIEWER_CLOSE.busy);
    };
    const handle = (joined: ProgramControl | undefined, data: Buffer | ArrayBuffer | Buffer[]) => {
      if (done) return;
      const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8');
      const command = parseCommand(text);
      if (!command) return finish(AUTOMATION_CLOSE.notDevTools);
      // Who drives (issue 36): the engine's own domain is answered here; a program's input waits its turn.
      const answered = joined?.intercept(command);
      if (answered) return void program.send(answered);
      if (engineTargets.refuses(command)) return void program.send(refusal(command, 'that session is attached to the engine\'s own DevTools connection, not part of the session'));
      const verdict = judgeCommand(command, devtools.folders, devtools.isEngineTarget);
      if (!verdict.pass) return void program.send(refusal(command, verdict.why));
      if (!engineTargets.sent(verdict.command)) return void program.send(refusal(command, 'too many target listings wait for their answer already'));
      toBrowser(verdict.command === command ? text : JSON.stringify(verdict.command));
    };
    program.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      // A rejection here would reach the process (decisions.md 78): this connection ends instead.
      control.then((joined) => handle(joined, data)).catch(() => finish(PROGRAM_FAILED)).catch(() => undefined);
    });
    browser.on('open', () => {
      for (const text of waiting.splice(0)) browser.send(text);
    });
    // What the browser says goes to the program as text, as DevTools clients expect.
    browser.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
      if (program.readyState !== WebSocket.OPEN) return;
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) return void program.send(bytes);
      // The engine's own connection is never shown to the program (engine-targets.ts).
      let shown: FromBrowser;
      try {
        shown = engineTargets.fromBrowser(bytes.toString('utf8'));
      } catch {
        shown = { text: null, toBrowser: [], unreadable: 'a message the engine could not handle' };
      }
      // What the browser said that the view cannot read ends this program's connection, nothing else.
      if (shown.unreadable !== undefined) return finish(AUTOMATION_CLOSE.unreadable);
      for (const command of shown.toBrowser) browser.send(command);
      if (shown.text !== null) program.send(shown.text);
    });
    browser.on('close', () => finish(AUTOMATION_CLOSE.browserGone));
    browser.on('error', () => finish(AUTOMATION_CLOSE.browserGone));
    program.on('close', () => finish({ code: 1000, reason: 'the program left' }));
    program.on('error', () => finish({ code: 1011, reason: 'the program\'s connection failed' }));
  });
}
