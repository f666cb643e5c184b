// A raw WebDriver BiDi client for tests of programs driving Firefox ESR sessions (issue 45): each
// call waits for the answer of its id (or, for `send`, the next answer without a known id), and the
// events it hears are kept in order.
import { WebSocket } from 'ws';

export interface BiDiProgram {
  socket: WebSocket;
  call(method: string, params?: Record<string, unknown>): Promise<Record<string, any>>;
  send(text: string): Promise<Record<string, any>>;
  events: Array<Record<string, any>>;
  closed: Promise<number>;
}

/** Connects to a BiDi address (`webDriverBiDiEndpoint`); `closers` gets how to cut it at the test's end. */
export async function bidiProgram(address: string, closers: Array<() => unknown>): Promise<BiDiProgram> {
  const socket = new WebSocket(address, { perMessageDeflate: false });
  closers.push(() => socket.terminate());
  const waiting = new Map<number | null, (message: Record<string, any>) => void>();
  const events: Array<Record<string, any>> = [];
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as Record<string, any>;
    if (message.type === 'event') return void events.push(message);
    const id = typeof message.id === 'number' ? message.id : null;
    waiting.get(id)?.(message);
    waiting.delete(id);
  });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let next = 0;
  const answerOf = (id: number | null, text: string) => new Promise<Record<string, any>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${text.slice(0, 80)}`)), 20_000);
    waiting.set(id, (message) => (clearTimeout(timer), resolve(message)));
    socket.send(text);
  });
  return {
    socket,
    events,
    closed,
    call: (method, params = {}) => {
      const id = ++next;
      return answerOf(id, JSON.stringify({ id, method, params }));
    },
    send: (text) => answerOf(null, text),
  };
}
