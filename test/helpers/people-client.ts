// Test helper: a viewer's `people` WebSocket (issue 36) as the engine sees it: hello with a viewer
// key (the one its RFB connection passes as `?viewer=`; `formerNames` says it as `seat`, the name
// read for one version), the latest picture of who is here and who drives, the refusals it was
// told, and the driver's pointer positions.
import { randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';
import type { ControlClientMessage, ControlPicture, ControlServerMessage } from '../../src/protocol/index.js';

export interface PeopleClient {
  /** The viewer key this viewer made (pass it to its RFB connection). */
  viewerKey: string;
  /** The latest picture the engine sent. */
  picture(): ControlPicture | undefined;
  /** Waits until the latest picture passes `accept`; answers it. */
  until(accept: (picture: ControlPicture) => boolean, timeoutMs?: number): Promise<ControlPicture>;
  refusals: string[];
  pointers: Array<{ x: number; y: number }>;
  send(message: ControlClientMessage): void;
  close(): void;
  closed: Promise<number>;
}

export async function connectPeople(url: string, options: { pass?: string; formerNames?: boolean } = {}): Promise<PeopleClient> {
  const viewerKey = randomBytes(16).toString('base64url');
  const socket = new WebSocket(url, { perMessageDeflate: false });
  let latest: ControlPicture | undefined;
  const waiters = new Set<() => void>();
  const refusals: string[] = [];
  const pointers: Array<{ x: number; y: number }> = [];
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as ControlServerMessage;
    if (message.type === 'control') latest = message;
    else if (message.type === 'refused') refusals.push(message.message);
    else pointers.push({ x: message.x, y: message.y });
    for (const wake of waiters) wake();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => reject(new Error(`people socket refused: ${response.statusCode}`)));
  });
  const send = (message: ControlClientMessage) => socket.send(JSON.stringify(message));
  const key = options.formerNames ? { seat: viewerKey } : { viewerKey };
  socket.send(JSON.stringify({ type: 'hello', ...key, ...(options.pass ? { pass: options.pass } : {}) }));
  return {
    viewerKey,
    picture: () => latest,
    refusals,
    pointers,
    send,
    closed,
    close: () => socket.close(),
    until: (accept, timeoutMs = 10_000) =>
      new Promise<ControlPicture>((resolve, reject) => {
        const check = () => {
          if (latest && latest.viewerKey === viewerKey && accept(latest)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(latest);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such picture within ${timeoutMs} ms; the last: ${JSON.stringify(latest)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
}
