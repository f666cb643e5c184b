'use client';
// The account's usage meters, when the route shares them with this user.
import { useQuery } from '@tanstack/react-query';
import { usageQuery } from '../../core/index.js';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';

export function useUsage() {
  const { client } = useRemoteBrowser();
  return useQuery(usageQuery(client));
}
