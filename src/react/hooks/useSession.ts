'use client';
// One session by its handle, followed (held reads, back-off between them) until it runs or ends;
// following stops when the component using it unmounts.
import { useQuery } from '@tanstack/react-query';
import { remoteBrowserKeys, sessionQuery } from '../../core/index.js';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';

export function useSession(handle: string | null | undefined) {
  const { client } = useRemoteBrowser();
  return useQuery({
    ...sessionQuery(client, handle ?? ''),
    queryKey: handle ? remoteBrowserKeys.session(client.endpoint, handle) : remoteBrowserKeys.session(client.endpoint, ''),
    enabled: Boolean(handle),
  });
}
