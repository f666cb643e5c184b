// A program on DevTools as a driver (issue 36, decisions.md 101). In a session with one driver, a
// program of the account drives when it attaches; it hands control to a person and takes it back
// with commands of a domain of the engine's own, answered here and never sent to the browser:
// `RemoteBrowserKit.getControl`, `RemoteBrowserKit.handOver {to?}` (to a person's id, or to the
// first who asked; without anyone, nobody drives until a person presses) and
// `RemoteBrowserKit.takeControl`; it hears `RemoteBrowserKit.controlChanged` on every DevTools
// session that used the domain (Playwright: `browser.newBrowserCDPSession()`, then
// `session.on('RemoteBrowserKit.controlChanged')`). While a person drives, its `Input.*` commands
// are refused with a DevTools error, so a person's hands and a program's never mix.
import type { ControlPicture } from '../../../protocol/index.js';
import type { ControlMember } from '../control/driving.js';
import type { HeldDriving, NodeDriving } from '../control/node-driving.js';
import type { DevToolsCommand } from './policy.js';

export const CONTROL_DOMAIN = 'RemoteBrowserKit';

/** What the program sees of the picture: the mode, the driver, the people, and whether it drives. */
export function controlEvent(picture: ControlPicture) {
  return { mode: picture.mode, driver: picture.driver, people: picture.people, you: picture.you, drives: picture.mode !== 'one' || picture.driver?.id === picture.you };
}

export interface ProgramControl {
  /** The answer to a command of the engine's domain (JSON text), or a refusal of an `Input.*` while a person drives; null: the command goes on. */
  intercept(command: DevToolsCommand): string | null;
  leave(): void;
}

/** A program as a member of its session's driving, whatever protocol it speaks. */
export interface ProgramMember {
  member: ControlMember;
  /** The latest picture, once the session's driving has told one. */
  latest(): ControlPicture | undefined;
  leave(): void;
}

/** Joins a program to its session's driving as a driver; `changed` hears each picture. */
export async function joinAsProgram(driving: NodeDriving, sessionId: string, changed: (picture: ControlPicture) => void): Promise<ProgramMember> {
  const held: HeldDriving = await driving.hold(sessionId);
  let latest: ControlPicture | undefined;
  const member: ControlMember = held.driving.join({ kind: 'program', rights: 'control' }, (picture) => {
    latest = picture;
    changed(picture);
  });
  return {
    member,
    latest: () => latest,
    leave() {
      member.leave();
      held.release();
    },
  };
}

/** Joins a DevTools program to its session's driving; `send` writes to the program. */
export async function programControl(driving: NodeDriving, sessionId: string, send: (text: string) => void): Promise<ProgramControl> {
  /** DevTools sessions (`''`: the root) that used the domain: each hears the changes. */
  const listeners = new Set<string>();
  const program = await joinAsProgram(driving, sessionId, (picture) => {
    for (const sessionId of listeners) {
      send(JSON.stringify({ method: `${CONTROL_DOMAIN}.controlChanged`, params: controlEvent(picture), ...(sessionId ? { sessionId } : {}) }));
    }
  });
  const { member } = program;
  const reply = (command: DevToolsCommand, body: { result: unknown } | { error: { code: number; message: string } }) =>
    JSON.stringify({ id: command.id, ...body, ...(command.sessionId === undefined ? {} : { sessionId: command.sessionId }) });
  return {
    intercept(command) {
      if (command.method.startsWith(`${CONTROL_DOMAIN}.`)) {
        listeners.add(command.sessionId ?? '');
        let refused: string | null = null;
        switch (command.method) {
          case `${CONTROL_DOMAIN}.getControl`:
            break;
          case `${CONTROL_DOMAIN}.handOver`: {
            const to = command.params?.to;
            if (to !== undefined && typeof to !== 'string') refused = 'to: the id of a person in the session (from people)';
            else refused = to === undefined ? member.release() : member.give(to);
            break;
          }
          case `${CONTROL_DOMAIN}.takeControl`:
            refused = member.take();
            break;
          default:
            refused = `unknown method; ${CONTROL_DOMAIN} has getControl, handOver and takeControl`;
        }
        if (refused) return reply(command, { error: { code: -32000, message: `${command.method}: ${refused}` } });
        const latest = program.latest();
        return reply(command, { result: latest ? controlEvent(latest) : {} });
      }
      if (command.method.startsWith('Input.') && !member.drives()) {
        return reply(command, { error: { code: -32000, message: `${command.method} is not allowed in remote-browser-kit sessions: a person drives this session now; take control back first (${CONTROL_DOMAIN}.takeControl)` } });
      }
      return null;
    },
    leave: () => program.leave(),
  };
}
