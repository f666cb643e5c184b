// Test helper: one node's own way to the database, a TCP relay on loopback that a test can cut (the
// fault suite's partition: every connection through it reset, new ones refused, while other nodes
// still reach the database) and mend. It only makes the fault happen; the database is real.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface DatabaseLink {
  /** `database` (a postgres:// URL) rewritten to go through this link. */
  url(database: string): string;
  /** Resets every connection through the link and refuses new ones until mend(). */
  cut(): void;
  mend(): void;
  close(): Promise<void>;
}

export async function startDatabaseLink(databasePort: number): Promise<DatabaseLink> {
  const open = new Set<Socket>();
  let cut = false;
  const server: Server = createServer((client) => {
    if (cut) return void client.resetAndDestroy();
    const upstream = connect(databasePort, '127.0.0.1');
    open.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url(database) {
      const address = new URL(database);
      address.port = String(port);
      return address.toString();
    },
    cut() {
      cut = true;
      for (const socket of open) socket.resetAndDestroy();
      open.clear();
    },
    mend() {
      cut = false;
    },
    close() {
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
