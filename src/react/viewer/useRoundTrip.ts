// The round-trip time to the share API every few seconds while the live screen shows, for its
// connection quality.
import { useEffect, useState } from 'react';
import { measureRoundTrip } from '../../core/share-api.js';

const PING_MS = 5000;

export function useRoundTrip(shareBase: string, linkId: string, shareFetch: typeof fetch | undefined, shown: boolean): number | null {
  const [rttMs, setRttMs] = useState<number | null>(null);
  useEffect(() => {
    if (!shown) return;
    let stopped = false;
    const measure = () =>
      measureRoundTrip({ shareBase, linkId, fetch: shareFetch }).then(
        (ms) => {
          if (!stopped && ms !== undefined) setRttMs(ms);
        },
        () => {
          if (!stopped) setRttMs(null);
        },
      );
    void measure();
    const timer = setInterval(measure, PING_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [shareBase, linkId, shareFetch, shown]);
  return rttMs;
}
