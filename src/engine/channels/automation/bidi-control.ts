// A program on WebDriver BiDi as a driver (issue 45, decisions.md 144): the BiDi counterpart of
// program-control.ts. The engine's own commands are an extension module of BiDi's form, answered
// here and never sent to the browser: `remoteBrowserKit:control.get`, `remoteBrowserKit:control.handOver
// {to?}` and `remoteBrowserKit:control.take`; every program that used the module hears the event
// `remoteBrowserKit:control.changed`. While a person drives, `input.performActions`,
// `input.releaseActions` and `input.setFiles` are refused with a BiDi error, so a person's hands
// and a program's never mix.
import type { NodeDriving } from '../control/node-driving.js';
import type { BiDiCommand } from './bidi-policy.js';
import { controlEvent, joinAsProgram } from './program-control.js';

export const BIDI_CONTROL_MODULE = 'remoteBrowserKit:control';

/** Input a program's hands send: refused while a person drives. */
const INPUT = new Set(['input.performActions', 'input.releaseActions', 'input.setFiles']);

export interface BiDiProgramControl {
  /** The answer to a command of the engine's module (JSON text), or a refusal of input while a person drives; null: the command goes on. */
  intercept(command: BiDiCommand): string | null;
  leave(): void;
}

/** Joins a BiDi program to its session's driving; `send` writes to the program. */
export async function bidiControl(driving: NodeDriving, sessionId: string, send: (text: string) => void): Promise<BiDiProgramControl> {
  let listening = false;
  const program = await joinAsProgram(driving, sessionId, (picture) => {
    if (listening) send(JSON.stringify({ type: 'event', method: `${BIDI_CONTROL_MODULE}.changed`, params: controlEvent(picture) }));
  });
  const { member } = program;
  const error = (command: BiDiCommand, code: string, message: string) => JSON.stringify({ type: 'error', id: command.id, error: code, message });
  return {
    intercept(command) {
      if (command.method.startsWith(`${BIDI_CONTROL_MODULE}.`)) {
        listening = true;
        let refused: string | null = null;
        switch (command.method) {
          case `${BIDI_CONTROL_MODULE}.get`:
            break;
          case `${BIDI_CONTROL_MODULE}.handOver`: {
            const to = command.params?.to;
            if (to !== undefined && typeof to !== 'string') return error(command, 'invalid argument', `${command.method}: to: the id of a person in the session (from people)`);
            refused = to === undefined ? member.release() : member.give(to);
            break;
          }
          case `${BIDI_CONTROL_MODULE}.take`:
            refused = member.take();
            break;
          default:
            return error(command, 'unknown command', `${command.method}: ${BIDI_CONTROL_MODULE} has get, handOver and take`);
        }
        if (refused) return error(command, 'unsupported operation', `${command.method}: ${refused}`);
        const latest = program.latest();
        return JSON.stringify({ type: 'success', id: command.id, result: latest ? controlEvent(latest) : {} });
      }
      if (INPUT.has(command.method) && !member.drives()) {
        return error(command, 'unsupported operation', `${command.method} is refused in remote-browser-kit sessions: a person drives this session now; take control back first (${BIDI_CONTROL_MODULE}.take)`);
      }
      return null;
    },
    leave: () => program.leave(),
  };
}
