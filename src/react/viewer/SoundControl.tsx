// The toolbar's sound control: mute and volume while the session's sound plays; "Tap to hear" while
// the browser holds it back until a gesture; a line saying this browser cannot play it; nothing for
// a session without sound.
import { useTranslation } from 'react-i18next';
import type { RemoteSound } from './useRemoteSound.js';

export function SoundControl({ sound }: { sound: RemoteSound }) {
  const { t } = useTranslation('viewer');
  if (sound.available === 'no-sound') return null;
  if (sound.available === 'no-webcodecs') {
    return (
      <span className="rbk-viewer__sound-note" data-sound="unavailable">
        {t('sound.unavailable')}
      </span>
    );
  }
  // Muted, the listener asked for no sound: the mute button (a gesture itself) stands in for "Tap to hear".
  if (sound.blocked && !sound.muted) {
    return (
      <button type="button" className="rbk-button rbk-button--primary" data-sound="blocked" onClick={sound.resume}>
        {t('sound.tapToHear')}
      </button>
    );
  }
  const percent = Math.round(sound.volume * 100);
  return (
    <span role="group" aria-label={t('sound.label')} className="rbk-viewer__sound" data-sound={sound.muted ? 'muted' : sound.playing ? 'playing' : 'waiting'}>
      <button
        type="button"
        className="rbk-button"
        aria-pressed={sound.muted}
        onClick={() => {
          sound.resume();
          sound.setMuted(!sound.muted);
        }}
      >
        {t('sound.mute')}
      </button>
      <input
        type="range"
        className="rbk-viewer__volume"
        min={0}
        max={100}
        step={5}
        value={percent}
        aria-label={t('sound.volume')}
        aria-valuetext={t('sound.volumeValue', { percent })}
        onChange={(event) => {
          const volume = Number(event.currentTarget.value) / 100;
          sound.setVolume(volume);
          // Turning the volume up is asking to hear.
          if (sound.muted && volume > 0) sound.setMuted(false);
        }}
      />
    </span>
  );
}
