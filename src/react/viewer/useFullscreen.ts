// Full screen for the live screen's root element: whether it is, and a toggle.
import { useCallback, useEffect, useState, type RefObject } from 'react';

export function useFullscreen(rootRef: RefObject<HTMLElement | null>): { fullscreen: boolean; toggleFullscreen: () => void } {
  const [fullscreen, setFullscreen] = useState(false);
  useEffect(() => {
    const onChange = () => setFullscreen(document.fullscreenElement === rootRef.current);
    document.addEventListener('fullscreenchange', onChange);
    return () => document.removeEventListener('fullscreenchange', onChange);
  }, [rootRef]);
  const toggleFullscreen = useCallback(() => {
    if (document.fullscreenElement) void document.exitFullscreen();
    else void rootRef.current?.requestFullscreen?.();
  }, [rootRef]);
  return { fullscreen, toggleFullscreen };
}
