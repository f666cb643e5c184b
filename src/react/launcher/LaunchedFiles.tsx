'use client';
// The launched panel's downloads (issue 23): what the session's browser has downloaded, each saved
// with one press through the proxy route (a real download in this browser, with the file's own
// name); one still arriving shows its size so far.
import { useTranslation } from 'react-i18next';
import { useRemoteBrowser } from '../RemoteBrowserProvider.js';
import { useSessionFiles } from '../hooks/useSessionFiles.js';
import { formatBytes } from '../viewer/format-bytes.js';

export function LaunchedFiles({ handle, running }: { handle: string; running: boolean }) {
  const { t, i18n } = useTranslation('launcher');
  const { client } = useRemoteBrowser();
  const files = useSessionFiles(handle, running);
  const downloads = (files.data ?? []).filter((file) => file.kind === 'download');
  if (!running) return null;
  return (
    <section className="rbk-launcher__files" aria-label={t('files.title')}>
      <h3 className="rbk-launcher__label">{t('files.title')}</h3>
      {downloads.length === 0 ? (
        <p className="rbk-launcher__hint">{t('files.none')}</p>
      ) : (
        <ul className="rbk-files__list">
          {downloads.map((file) => (
            <li key={file.name} className="rbk-files__item" data-state={file.state}>
              {file.state === 'complete' ? (
                <a className="rbk-files__name" href={client.fileUrl(handle, file.name)} download={file.name}>
                  {t('files.save', { name: file.name })}
                </a>
              ) : (
                <span className="rbk-files__name">{t('files.arriving', { name: file.name })}</span>
              )}
              <span className="rbk-files__size">{formatBytes(file.size, i18n.language)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
