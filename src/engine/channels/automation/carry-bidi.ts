// The automation channel's way for a Firefox session (issue 45, decisions.md 143, 169): a program's
// WebSocket joined to a session of its own on the browser's one WebDriver BiDi session, which the
// node's hub shares among programs and the engine's tab watcher (SessionBiDi.join,
// runtime/browser/bidi-hub.ts). Every command passes the BiDi policy (bidi-policy.ts) and, under
// `control: "one"`, the program's hands wait their turn (bidi-control.ts), before the hub sees it;
// the hub refuses only commands naming another client's ids, and undoes what the program made when
// it leaves. A message that is no command (not JSON, deeper than MESSAGE_DEPTH, over the door's size)
// is answered with a BiDi error and changes nothing; a failure while handling one ends this
// program's connection (1011), never the engine (decisions.md 78).
import { WebSocket } from 'ws';
import type { CloseReason, SessionBiDi } from '../channel.js';
import { VIEWER_CLOSE } from '../close-codes.js';
import { bidiRefusal, judgeBiDiCommand, readBiDiCommand } from './bidi-policy.js';
import type { BiDiProgramControl } from './bidi-control.js';

const BROWSER_GONE: CloseReason = { code: 4003, reason: 'the session\'s browser closed its WebDriver BiDi connection' };
/** A program's message the engine failed on (a defect, never the program's right): its connection ends, nothing else (DevTools and BiDi alike). */
export const PROGRAM_FAILED: CloseReason = { code: 1011, reason: 'the service failed on a message of this program' };

export function carryBiDi(program: WebSocket, bidi: SessionBiDi, joinControl?: (send: (text: string) => void) => Promise<BiDiProgramControl>): Promise<void> {
  return new Promise<void>((resolve) => {
    const answer = (text: string) => program.readyState === WebSocket.OPEN && program.send(text);
    const control: Promise<BiDiProgramControl | undefined> = joinControl ? joinControl(answer).catch(() => undefined) : Promise.resolve(undefined);
    let done = false;
    const finish = (close: CloseReason) => {
      if (done) return;
      done = true;
      void control.then((joined) => joined?.leave());
      hub.leave();
      if (program.readyState === WebSocket.OPEN || program.readyState === WebSocket.CONNECTING) program.close(close.code, close.reason);
      resolve();
    };
    const hub = bidi.join(answer, () => finish(BROWSER_GONE));
    const handle = (joined: BiDiProgramControl | undefined, data: Buffer | ArrayBuffer | Buffer[]) => {
      if (done) return;
      const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8');
      const reading = readBiDiCommand(text);
      if ('answer' in reading) return void answer(reading.answer);
      const { command } = reading;
      const answered = joined?.intercept(command);
      if (answered) return void answer(answered);
      const verdict = judgeBiDiCommand(command, bidi.folders);
      if (!verdict.pass) return void answer(bidiRefusal(command, verdict.error, verdict.why));
      if (!hub.send(command)) finish(VIEWER_CLOSE.busy);
    };
    program.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
      // A rejection here would reach the process (decisions.md 78): this connection ends instead.
      control.then((joined) => handle(joined, data)).catch(() => finish(PROGRAM_FAILED)).catch(() => undefined);
    });
    program.on('close', () => finish({ code: 1000, reason: 'the program left' }));
    program.on('error', () => finish({ code: 1011, reason: 'the program\'s connection failed' }));
  });
}
