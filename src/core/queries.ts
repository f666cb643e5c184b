// Query keys (namespaced under 'rbk', so they never meet the host app's) and queryOptions
// factories: the framework-free half of the data layer; src/react only binds them.
import type { Query } from '@tanstack/query-core';
import { isSessionEnded, type SessionStatus } from '../protocol/statuses.js';
import type { ProxyRecording, ProxySession } from '../protocol/proxy.js';
import type { RemoteBrowserClient } from './client.js';

export const remoteBrowserKeys = {
  all: (endpoint: string) => ['rbk', endpoint] as const,
  images: (endpoint: string) => ['rbk', endpoint, 'images'] as const,
  session: (endpoint: string, handle: string) => ['rbk', endpoint, 'session', handle] as const,
  usage: (endpoint: string) => ['rbk', endpoint, 'usage'] as const,
  files: (endpoint: string, handle: string) => ['rbk', endpoint, 'session', handle, 'files'] as const,
  profiles: (endpoint: string) => ['rbk', endpoint, 'profiles'] as const,
  recording: (endpoint: string, handle: string) => ['rbk', endpoint, 'session', handle, 'recording'] as const,
};

// Plain option objects (what react-query's queryOptions() returns), so this file needs no React.
export function imagesQuery(client: RemoteBrowserClient) {
  return { queryKey: remoteBrowserKeys.images(client.endpoint), queryFn: () => client.images(), staleTime: 60_000 };
}

export function usageQuery(client: RemoteBrowserClient) {
  return { queryKey: remoteBrowserKeys.usage(client.endpoint), queryFn: () => client.usage(), staleTime: 10_000 };
}

/** The signed-in user's saved profiles (issue 34). */
export function profilesQuery(client: RemoteBrowserClient) {
  return { queryKey: remoteBrowserKeys.profiles(client.endpoint), queryFn: () => client.profiles(), staleTime: 10_000 };
}

/** Poll delay while a session starts: quick at first, then backing off to 5 s. */
export function sessionPollDelay(pollCount: number): number {
  return Math.min(500 * 2 ** Math.max(0, pollCount - 1), 5000);
}

/**
 * How long each read of a starting session may be held by the route (decisions.md 82): it answers
 * the moment the session runs. Short enough for a serverless route's time limit.
 */
export const SESSION_WAIT_MS = 10_000;

/**
 * One session, followed until it is running or has ended; nothing after that. Each read waits on
 * the service for the status to move on, so a start takes one request; the back-off between reads
 * only matters when a wait ran out, or a service answers without waiting.
 */
export function sessionQuery(client: RemoteBrowserClient, handle: string) {
  return {
    queryKey: remoteBrowserKeys.session(client.endpoint, handle),
    queryFn: ({ signal }: { signal?: AbortSignal }) => client.session(handle, { wait: SESSION_WAIT_MS, ...(signal ? { signal } : {}) }),
    refetchInterval: (query: Query<ProxySession, Error, ProxySession, readonly unknown[]>) => {
      const status = query.state.data?.status as SessionStatus | undefined;
      if (status === 'running' || (status && isSessionEnded(status))) return false;
      return sessionPollDelay(query.state.dataUpdateCount);
    },
  };
}

/** A running session's files, read again every 2 s while someone shows them (downloads arrive on their own). */
export function sessionFilesQuery(client: RemoteBrowserClient, handle: string) {
  return { queryKey: remoteBrowserKeys.files(client.endpoint, handle), queryFn: () => client.files(handle), refetchInterval: 2000 };
}

/** How often a recording still being made is read again: its timeline and length grow. */
export const RECORDING_REFRESH_MS = 5000;

/** A session's recording (issue 35): read again while it is being made, not after it is whole. */
export function recordingQuery(client: Pick<RemoteBrowserClient, 'endpoint' | 'recording'>, handle: string) {
  return {
    queryKey: remoteBrowserKeys.recording(client.endpoint, handle),
    queryFn: () => client.recording(handle),
    refetchInterval: (query: Query<ProxyRecording, Error, ProxyRecording, readonly unknown[]>) => (query.state.data && query.state.data.state !== 'ended' ? RECORDING_REFRESH_MS : false),
  };
}
