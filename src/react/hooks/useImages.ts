'use client';
// The browsers and exit locations the proxy route offers this user.
import { useQuery } from '@tanstack/react-query';
import { imagesQuery } from '../../core/index.js';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';

export function useImages() {
  const { client } = useRemoteBrowser();
  return useQuery(imagesQuery(client));
}
