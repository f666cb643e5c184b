'use client';
// <RemoteBrowserProvider>: the components' shared data layer and language: our own QueryClient
// (or the host's, when passed), our own i18next instance, and the client of the proxy route.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createContext, useContext, useMemo, useState, type ReactNode } from 'react';
import { I18nextProvider } from 'react-i18next';
import { createRemoteBrowserClient, RemoteBrowserClientError, type RemoteBrowserClient } from '../core/index.js';
import type { ShareLanguage } from '../protocol/index.js';
import { createComponentI18n } from './i18n.js';

export interface RemoteBrowserProviderProps {
  /** Where the proxy route is mounted in your app, e.g. `/api/remote-browser`. */
  endpoint: string;
  /** Language of the components (en, de, fr, es, it, pt, ja). Default `en`. */
  language?: ShareLanguage;
  /** Your QueryClient, to share its cache; by default the components keep their own. */
  queryClient?: QueryClient;
  /** A fetch to use (for example one that adds your app's CSRF header). */
  fetch?: typeof fetch;
  /** Extra headers for every request to the route. Never an API key: it is refused. */
  headers?: Record<string, string>;
  children: ReactNode;
}

interface RemoteBrowserContextValue {
  client: RemoteBrowserClient;
  language: ShareLanguage;
}

/** One retry for faults (network, service); none for answers that would only repeat (refusals). */
function retryOnlyFaults(failureCount: number, error: unknown): boolean {
  const code = error instanceof RemoteBrowserClientError ? error.code : 'network';
  return failureCount < 1 && (code === 'network' || code === 'service_error');
}

const RemoteBrowserContext = createContext<RemoteBrowserContextValue | null>(null);

export function useRemoteBrowser(): RemoteBrowserContextValue {
  const value = useContext(RemoteBrowserContext);
  if (!value) throw new Error('remote-browser-kit components and hooks must be inside <RemoteBrowserProvider endpoint="...">');
  return value;
}

export function RemoteBrowserProvider({ endpoint, language = 'en', queryClient, fetch, headers, children }: RemoteBrowserProviderProps) {
  const headerKey = JSON.stringify(headers ?? {});
  const client = useMemo(
    () => createRemoteBrowserClient({ endpoint, ...(fetch ? { fetch } : {}), ...(headers ? { headers } : {}) }),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [endpoint, fetch, headerKey],
  );
  const [ownQueryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { retry: retryOnlyFaults, refetchOnWindowFocus: false } } }));
  const i18n = useMemo(() => createComponentI18n(language), [language]);
  const value = useMemo(() => ({ client, language }), [client, language]);
  return (
    <QueryClientProvider client={queryClient ?? ownQueryClient}>
      <I18nextProvider i18n={i18n}>
        <RemoteBrowserContext.Provider value={value}>{children}</RemoteBrowserContext.Provider>
      </I18nextProvider>
    </QueryClientProvider>
  );
}
