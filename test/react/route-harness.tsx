// Component test harness: the real proxy route (node adapter on a loopback server) in front of a
// real engine, and a render helper that wraps a component in <RemoteBrowserProvider>.
import { render, type RenderResult } from '@testing-library/react';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReactNode } from 'react';
import { toNodeHandler } from '../../src/server/adapters/node.js';
import { createProxyRoute, createServiceClient, engineService, type ProxyRouteOptions } from '../../src/server/index.js';
import type { Engine } from '../../src/engine/engine.js';
import type { EngineRuntime } from '../../src/engine/sessions/node-runtime.js';
import type { ShareLanguage } from '../../src/protocol/index.js';
import { RemoteBrowserProvider } from '../../src/react/RemoteBrowserProvider.js';

export const ROUTE_SECRET = 'component-tests-handle-secret-0123456789';

export interface MountedRoute {
  endpoint: string;
  close(): Promise<void>;
}

/** Mounts a proxy route for `apiKey` on 127.0.0.1; `engine: null` points it at a service that is down. */
export async function mountRoute(engine: Engine<EngineRuntime> | null, apiKey: string, options: Partial<ProxyRouteOptions> = {}): Promise<MountedRoute> {
  const service = engine ? engineService(engine, { apiKey }) : createServiceClient({ baseUrl: 'http://127.0.0.1:9', apiKey, retries: 0, timeoutMs: 2000 });
  const route = createProxyRoute({ service, authorize: () => ({ id: 'person-1' }), secret: ROUTE_SECRET, policy: { usage: () => true }, ...options });
  const handler = toNodeHandler(route);
  const server: Server = createServer((request, response) => void handler(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}${route.basePath}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export function renderWithRoute(ui: ReactNode, endpoint: string, language: ShareLanguage = 'en'): RenderResult {
  return render(
    <RemoteBrowserProvider endpoint={endpoint} language={language}>
      {ui}
    </RemoteBrowserProvider>,
  );
}
