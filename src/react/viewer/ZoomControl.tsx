// The viewer's own zoom, shown while the remote screen is pinched larger than fits (issue 36): how
// much, and a button back to the fitted picture. Nothing shows at the fitted size.
import { useTranslation } from 'react-i18next';

export function ZoomControl({ zoom, onReset }: { zoom: number; onReset: () => void }) {
  const { t } = useTranslation('viewer');
  if (zoom <= 1) return null;
  const percent = Math.round(zoom * 100);
  return (
    <div className="rbk-viewer__zoom">
      <button type="button" className="rbk-button" onClick={onReset}>
        {t('zoom.fit', { percent })}
      </button>
      <span className="rbk-viewer__sr-only" role="status">
        {t('zoom.status', { percent })}
      </span>
    </div>
  );
}
