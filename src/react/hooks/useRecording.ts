'use client';
// A session's recording (issue 35): its state, length and timeline, read again every 5 s while it
// is still being made. Through the provider's proxy route by handle, or from a replay link's client
// (`from`, decisions.md 110), whose calls need no handle.
import { useQuery } from '@tanstack/react-query';
import { recordingQuery, type ReplayLinkClient } from '../../core/index.js';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';

export function useRecording(handle: string | null | undefined, from?: ReplayLinkClient) {
  const { client } = useRemoteBrowser();
  return useQuery({ ...recordingQuery(from ?? client, handle ?? ''), enabled: Boolean(handle) || Boolean(from) });
}
