'use client';
// A session's recording (issue 35): its state, length and timeline, read again every 5 s while it
// is still being made.
import { useQuery } from '@tanstack/react-query';
import { recordingQuery } from '../../core/index.js';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';

export function useRecording(handle: string | null | undefined) {
  const { client } = useRemoteBrowser();
  return useQuery({ ...recordingQuery(client, handle ?? ''), enabled: Boolean(handle) });
}
