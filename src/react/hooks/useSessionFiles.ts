'use client';
// A running session's files (issue 23), read again every 2 s while a component shows them; nothing
// is asked for a session that is not running (its files went with it).
import { useQuery } from '@tanstack/react-query';
import { remoteBrowserKeys, sessionFilesQuery } from '../../core/index.js';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';

export function useSessionFiles(handle: string | null | undefined, running = true) {
  const { client } = useRemoteBrowser();
  return useQuery({
    ...sessionFilesQuery(client, handle ?? ''),
    queryKey: remoteBrowserKeys.files(client.endpoint, handle ?? ''),
    enabled: Boolean(handle) && running,
  });
}
