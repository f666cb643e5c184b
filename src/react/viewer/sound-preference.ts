// The listener's mute and volume, kept for the browser tab (sessionStorage) so a reconnect or a
// reload keeps them. Under the viewer's own key: the host page's storage is the host's.
export interface SoundPreference {
  muted: boolean;
  volume: number;
}

export const SOUND_PREFERENCE_KEY = 'remote-browser-kit:viewer:sound';

/** What the listener chose last in this tab, or nothing (storage blocked, or never chosen). */
export function readSoundPreference(): Partial<SoundPreference> {
  try {
    const value = JSON.parse(sessionStorage.getItem(SOUND_PREFERENCE_KEY) ?? 'null') as Partial<SoundPreference> | null;
    if (typeof value !== 'object' || value === null) return {};
    return {
      ...(typeof value.muted === 'boolean' ? { muted: value.muted } : {}),
      ...(typeof value.volume === 'number' && value.volume >= 0 && value.volume <= 1 ? { volume: value.volume } : {}),
    };
  } catch {
    return {};
  }
}

export function writeSoundPreference(preference: SoundPreference): void {
  try {
    sessionStorage.setItem(SOUND_PREFERENCE_KEY, JSON.stringify({ muted: preference.muted, volume: preference.volume }));
  } catch {
    // Storage full or blocked (a private window, a sandboxed frame): the choice lasts for this page only.
  }
}
