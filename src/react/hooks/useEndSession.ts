'use client';
// Ending a session by its handle; its status and the usage meters are read again afterwards.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { remoteBrowserKeys } from '../../core/index.js';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';

export function useEndSession() {
  const { client } = useRemoteBrowser();
  const queryClient = useQueryClient();
  return useMutation<void, Error, string>({
    mutationFn: (handle) => client.end(handle),
    onSuccess: (_, handle) => {
      void queryClient.invalidateQueries({ queryKey: remoteBrowserKeys.session(client.endpoint, handle) });
      void queryClient.invalidateQueries({ queryKey: remoteBrowserKeys.usage(client.endpoint) });
    },
  });
}
