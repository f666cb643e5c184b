'use client';
// Launching a session: one launch id per launch, so a retried request starts no second session.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { remoteBrowserKeys, type ProxyCreateResponse } from '../../core/index.js';
import type { CreateRequest } from '../../protocol/index.js';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';

export interface CreateSessionInput {
  request: CreateRequest;
  /** Same id for retries of the same launch; a new id for a new launch. */
  launchId: string;
}

export function useCreateSession() {
  const { client } = useRemoteBrowser();
  const queryClient = useQueryClient();
  return useMutation<ProxyCreateResponse, Error, CreateSessionInput>({
    mutationFn: ({ request, launchId }) => client.create(request, launchId),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: remoteBrowserKeys.usage(client.endpoint) }),
  });
}
