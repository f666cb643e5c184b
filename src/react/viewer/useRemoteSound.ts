// Binds the sound player (src/core/sound-player.ts) to the live screen: loaded with import() only
// for a session that has sound, started once the live screen shows, stopped when it goes; mute and
// volume kept in the tab (sound-preference.ts). Any press or key in the viewer also lets blocked sound play.
import { useCallback, useEffect, useState, useSyncExternalStore, type RefObject } from 'react';
import { ReconnectPolicy } from '../../core/reconnect.js';
import type { SoundPlayer, SoundState } from '../../core/sound-player.js';
import { shareApiUrl } from '../../protocol/share-api.js';
import { readSoundPreference, writeSoundPreference } from './sound-preference.js';

export interface RemoteSound extends SoundState {
  setMuted(muted: boolean): void;
  setVolume(volume: number): void;
  /** Lets blocked sound play; only works from a gesture's handler. */
  resume(): void;
}

const NO_SOUND: SoundState = { available: 'no-sound', blocked: false, muted: false, volume: 1, playing: false };
const noChanges = () => () => undefined;
const noSound = () => NO_SOUND;

export function useRemoteSound({ shareBase, linkId, sound, hidden, rootRef }: { shareBase: string; linkId: string; sound: boolean; hidden: boolean; rootRef: RefObject<HTMLElement | null> }): RemoteSound {
  const [player, setPlayer] = useState<SoundPlayer | null>(null);
  const wanted = sound && !hidden;

  useEffect(() => {
    if (!wanted) return;
    let cancelled = false;
    let created: SoundPlayer | null = null;
    void import('../../core/sound-player.js').then(
      ({ SoundPlayer }) => {
        if (cancelled) return;
        const made = new SoundPlayer({ url: shareApiUrl(shareBase, linkId, 'sound'), reconnect: new ReconnectPolicy(), ...readSoundPreference() });
        created = made;
        let last = made.getState();
        made.subscribe(() => {
          const now = made.getState();
          if (now.muted !== last.muted || now.volume !== last.volume) writeSoundPreference(now);
          last = now;
        });
        void made.start();
        setPlayer(made);
      },
      // Not loaded (offline, a blocked chunk): the viewer works on without sound.
      () => undefined,
    );
    return () => {
      cancelled = true;
      created?.stop();
      setPlayer(null);
    };
  }, [shareBase, linkId, wanted]);

  // Any gesture in the viewer counts: the sound starts with the first press on the remote screen.
  useEffect(() => {
    const root = rootRef.current;
    if (!root || !player) return;
    const resume = () => player.resume();
    root.addEventListener('pointerdown', resume, true);
    root.addEventListener('keydown', resume, true);
    return () => {
      root.removeEventListener('pointerdown', resume, true);
      root.removeEventListener('keydown', resume, true);
    };
  }, [player, rootRef]);

  const state = useSyncExternalStore(player?.subscribe ?? noChanges, player?.getState ?? noSound, player?.getState ?? noSound);
  const setMuted = useCallback((muted: boolean) => player?.setMuted(muted), [player]);
  const setVolume = useCallback((volume: number) => player?.setVolume(volume), [player]);
  const resume = useCallback(() => player?.resume(), [player]);
  return { ...(wanted ? state : NO_SOUND), setMuted, setVolume, resume };
}
