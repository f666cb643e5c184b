// Binds a share link's viewer state (src/core/viewer-state.ts: read, events, polling, back-off) to React.
import { useEffect, useState, useSyncExternalStore } from 'react';
import { ViewerStateFollower, type ViewerStateSnapshot } from '../../core/viewer-state.js';

export function useViewerState(shareBase: string | null, linkId: string | null, shareFetch: typeof fetch | undefined): ViewerStateSnapshot {
  const [follower] = useState(() => new ViewerStateFollower());
  useEffect(() => {
    follower.follow({ shareBase, linkId, fetch: shareFetch });
    return () => follower.stop();
  }, [follower, shareBase, linkId, shareFetch]);
  return useSyncExternalStore(follower.subscribe, follower.getState, follower.getState);
}
