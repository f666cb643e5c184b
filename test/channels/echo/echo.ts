// A channel made only for tests (issue 33): it sends back every message it is sent, opens nothing
// inside the session, and is offered to every session but those of the plan `closed`. It is
// registered with one line (createEngine's `channels`), and nothing outside this folder knows it.
// Named `echo` unless a test gives it another name (one a field of the share state has, say).
import type { Channel } from '../../../src/engine/channels/channel.js';

/** The plan whose sessions are not offered the echo channel. */
export const ECHO_CLOSED_PLAN = 'closed';

/** Seats per session: two on the share link, one on the view-only link. */
export const ECHO_SEATS = { control: 2, view: 1 };

export function echoChannel(name = 'echo'): Channel {
  return {
    name,
    opensWith: ['share-link', 'view-link'],
    attachment: 'listener',
    closes: { endClosed: { code: 4003, reason: 'echo end closed' }, refused: { code: 4004, reason: 'echo refused' } },
    offered: (_row, plan) => plan?.id !== ECHO_CLOSED_PLAN,
    advertised: true,
    needs: { seats: ECHO_SEATS, files: 1, messageBytes: 64 * 1024 },
    carry: ({ socket }) =>
      new Promise<void>((resolve) => {
        socket.on('message', (data: Buffer, isBinary: boolean) => socket.send(data, { binary: isBinary }));
        socket.once('close', () => resolve());
      }),
    close() {},
  };
}
