// Binds the viewer's `people` connection (src/core/people.ts, issue 36) to React: opened while
// the live screen shows and the session offers it, closed on unmount; its viewer key is made once,
// so the RFB connection can carry the same one from its first connection.
import { useEffect, useState, useSyncExternalStore } from 'react';
import { PeopleConnection, type PeopleSnapshot } from '../../core/people.js';
import type { ControlClientMessage } from '../../protocol/control.js';

const NOBODY: PeopleSnapshot = { picture: null, pointer: null, refused: null };
const noSubscription = () => () => undefined;

/** Who watches and who drives, and this viewer's own requests: what a host of the viewer may follow and act on (ShareViewer's `onPeople`). */
export interface PeopleBinding {
  snapshot: PeopleSnapshot;
  request: (message: ControlClientMessage) => void;
}

export function usePeople({ shareBase, linkId, pass, enabled }: { shareBase: string; linkId: string; pass?: string | undefined; enabled: boolean }): PeopleBinding & { viewerKey: string | undefined } {
  const [people] = useState(() => new PeopleConnection({ shareBase, linkId, pass }));
  useEffect(() => {
    if (!enabled) return;
    people.open();
    return () => people.close();
  }, [people, enabled]);
  const snapshot = useSyncExternalStore(enabled ? people.subscribe : noSubscription, enabled ? people.getState : () => NOBODY, () => NOBODY);
  return { viewerKey: enabled ? people.viewerKey : undefined, snapshot, request: (message) => people.send(message) };
}
