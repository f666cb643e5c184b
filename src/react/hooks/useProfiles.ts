'use client';
// The signed-in user's saved profiles (issue 34), read when `enabled`; and making a new one, after
// which the list is read again.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { profilesQuery, remoteBrowserKeys, type ProxyProfile } from '../../core/index.js';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';

export function useProfiles(enabled = true) {
  const { client } = useRemoteBrowser();
  return useQuery({ ...profilesQuery(client), enabled, retry: false });
}

export function useCreateProfile() {
  const { client } = useRemoteBrowser();
  const queryClient = useQueryClient();
  return useMutation<ProxyProfile, Error, { name: string; browser: string }>({
    mutationFn: ({ name, browser }) => client.createProfile(name, browser),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: remoteBrowserKeys.profiles(client.endpoint) }),
  });
}
