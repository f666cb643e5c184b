// The `people` channel (issue 36): a viewer's presence in a session and its requests for control.
// A WebSocket of JSON text messages (protocol/control.ts): the viewer says hello (its viewer key,
// and a pass from the owner's handle that names it), then asks, cancels, gives, releases or takes;
// the engine sends the whole picture (who is here, who drives) after each change and, in `one`
// mode, where the driver's pointer is. Carried on the node that runs the session, where its
// driving decides (node-driving.ts); another node only relays the bytes, as for every channel.
import type { WebSocket } from 'ws';
import { parseControlClientMessage, type ControlServerMessage } from '../../../protocol/index.js';
import type { Channel, CloseReason, LinkSeats } from '../channel.js';
import type { NodeDriving, ViewerPasses } from './node-driving.js';

export const PEOPLE_CLOSE = {
  notControl: { code: 4004, reason: 'the viewer sent something that is not a people message' },
} as const satisfies Record<string, CloseReason>;

/** Messages a viewer may send before its session's driving is found (its hello, perhaps a request). */
const EARLY_MESSAGES = 8;

export interface PeopleChannelOptions {
  driving: NodeDriving;
  passes: ViewerPasses;
  /** Seats per session for each link (as RFB's: one people connection per viewer). */
  linkSeats: LinkSeats;
}

export function peopleChannel(options: PeopleChannelOptions): Channel {
  return {
    name: 'people',
    opensWith: ['share-link', 'view-link'],
    // Not a second viewer: the viewer count stays RFB's (a listener, as files' and sound's are).
    attachment: 'listener',
    closes: { endClosed: { code: 4000, reason: 'the session ended' }, refused: PEOPLE_CLOSE.notControl },
    offered: () => true,
    advertised: true,
    // Its messages are short JSON (a viewer key, a pass, a person's id).
    needs: { seats: options.linkSeats, files: 1, messageBytes: 16 * 1024 },
    carry: ({ socket, sessionId, rights }) => carryPerson(socket, sessionId, rights, options),
    close() {
      options.driving.close();
    },
  };
}

async function carryPerson(socket: WebSocket, sessionId: string, rights: 'control' | 'view', options: PeopleChannelOptions): Promise<void> {
  // The session's driving is found first (its mode is read from the store): what the viewer says
  // meanwhile (its hello, at once) waits for it, and a viewer gone meanwhile never joins.
  // A viewer says hello and little else before it has joined: more than a few messages meanwhile is not a viewer.
  const early: Buffer[] = [];
  const keep = (data: Buffer) => {
    if (early.length < EARLY_MESSAGES) early.push(data);
    else socket.close(PEOPLE_CLOSE.notControl.code, PEOPLE_CLOSE.notControl.reason);
  };
  socket.on('message', keep);
  const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const held = await options.driving.hold(sessionId);
  socket.off('message', keep);
  if (socket.readyState !== socket.OPEN) return held.release();
  const send = (message: ControlServerMessage) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  const member = held.driving.join({ kind: 'person', rights }, send, (x, y) => send({ type: 'pointer', x, y }));
  // JSON text, or the same as bytes: another node relays a viewer's messages as bytes.
  const hear = (data: Buffer) => {
    const message = parseControlClientMessage(data.toString('utf8'));
    if (!message) return void socket.close(PEOPLE_CLOSE.notControl.code, PEOPLE_CLOSE.notControl.reason);
    let refused: string | null = null;
    switch (message.type) {
      case 'hello': {
        const pass = message.pass ? options.passes.open(sessionId, message.pass) : null;
        member.hello(message.viewerKey, pass);
        if (message.pass && !pass) refused = 'pass: not valid for this session, or expired; you are shown as a guest';
        break;
      }
      case 'ask':
        refused = member.ask();
        break;
      case 'cancel':
        member.cancel();
        break;
      case 'give':
        refused = member.give(message.to);
        break;
      case 'release':
        refused = member.release();
        break;
      case 'take':
        refused = member.take();
        break;
    }
    if (refused) send({ type: 'refused', message: refused });
  };
  for (const data of early) hear(data);
  socket.on('message', hear);
  await gone;
  member.leave();
  held.release();
}
