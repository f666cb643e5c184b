// Binds the live screen's noVNC connection (remote-screen.ts) and its reconnect policy
// (src/core/reconnect.ts) to React: the connection's state, the remote clipboard, and the screen
// that keys and pastes go to.
import { useCallback, useEffect, useRef, useState, useSyncExternalStore, type RefObject } from 'react';
import { ReconnectPolicy, type ReconnectSnapshot } from '../../core/reconnect.js';
import { remoteScreenTransport, type RemoteScreen, type RemoteScreenTransport } from './remote-screen.js';

export interface RemoteScreenState extends ReconnectSnapshot {
  /** The latest text the remote browser put on its clipboard. */
  remoteClipboard: string;
  /** The connected screen now, or `null` (read it at the moment of use: connections come and go). */
  remote: () => RemoteScreen | null;
  /** The picture comes as video now (the display moves; src/core/video-mode.ts). */
  showingVideo: boolean;
}

export function useRemoteScreen({ shareBase, linkId, viewerKey, viewOnly, video = false, hidden, screenRef }: { shareBase: string; linkId: string; viewerKey?: string | undefined; viewOnly: boolean; video?: boolean; hidden: boolean; screenRef: RefObject<HTMLElement | null> }): RemoteScreenState {
  const [policy] = useState(() => new ReconnectPolicy());
  const transportRef = useRef<RemoteScreenTransport | null>(null);
  const [remoteClipboard, setRemoteClipboard] = useState('');
  const viewOnlyRef = useRef(viewOnly);
  viewOnlyRef.current = viewOnly;
  const videoRef = useRef(video);
  videoRef.current = video;
  const [showingVideo, setShowingVideo] = useState(false);

  // Before connecting: behind the waiting screen a dropped connection retries at once; shown at
  // last, a connection waiting to retry tries now.
  useEffect(() => policy.setPreconnecting(hidden), [policy, hidden]);

  // One noVNC connection at a time; a dropped connection retries with back-off.
  useEffect(() => {
    const transport = remoteScreenTransport({
      shareBase,
      linkId,
      viewerKey,
      target: () => screenRef.current,
      viewOnly: () => viewOnlyRef.current,
      video: () => videoRef.current,
      onVideo: setShowingVideo,
      onConnect: () => policy.connected(),
      onDrop: () => {
        setShowingVideo(false);
        policy.dropped();
      },
      onLoadFailed: () => policy.failed(),
      onClipboard: setRemoteClipboard,
    });
    transportRef.current = transport;
    policy.open(transport);
    return () => {
      policy.close();
      if (transportRef.current === transport) transportRef.current = null;
    };
  }, [policy, shareBase, linkId, viewerKey, screenRef]);

  // viewOnly is applied to the open connection without reconnecting.
  useEffect(() => {
    const remote = transportRef.current?.current();
    if (!remote) return;
    remote.viewOnly = viewOnly;
    remote.resizeSession = !viewOnly;
  }, [viewOnly]);

  const snapshot = useSyncExternalStore(policy.subscribe, policy.getState, policy.getState);
  const remote = useCallback(() => transportRef.current?.current() ?? null, []);
  return { ...snapshot, remoteClipboard, remote, showingVideo };
}
