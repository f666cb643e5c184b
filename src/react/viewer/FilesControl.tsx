'use client';
// The toolbar's files control (issue 23), for a link that controls: a "Files" button whose panel
// lists what the remote browser downloaded (each saved with one press, a real download with its
// own name; one still arriving shows its size so far) and what was given to it, and gives files
// (picked, or dropped anywhere on the viewer) with their progress. Arrivals are announced to
// screen readers. A view-only link shows nothing: it is offered no files.
import { useEffect, useId, useRef, useState, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { followSessionFiles, sessionFileUrl, uploadToSession, type FilesChannelMessage } from '../../core/session-files.js';
import { formatBytes } from './format-bytes.js';

export interface FilesControlProps {
  shareBase: string;
  linkId: string;
  viewOnly: boolean;
  hidden: boolean;
  /** Where files may be dropped: the whole viewer. */
  dropRef: RefObject<HTMLElement | null>;
}

interface Giving {
  name: string;
  sent: number;
  outcome?: { ok: boolean; message?: string };
}

export function FilesControl({ shareBase, linkId, viewOnly, hidden, dropRef }: FilesControlProps) {
  const { t, i18n } = useTranslation('viewer');
  const id = useId();
  const [files, setFiles] = useState<FilesChannelMessage | null>(null);
  const [open, setOpen] = useState(false);
  const [giving, setGiving] = useState<Giving[]>([]);
  const [announce, setAnnounce] = useState('');
  const known = useRef<Set<string> | null>(null);
  const picker = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (viewOnly || hidden) return;
    return followSessionFiles(shareBase, linkId, (message) => {
      const complete = message.files.filter((f) => f.kind === 'download' && f.state === 'complete').map((f) => `${f.name}\0${f.created}`);
      // Downloads that finish while the viewer watches are announced; the first list is not news.
      if (known.current) {
        const arrived = message.files.find((f) => f.kind === 'download' && f.state === 'complete' && !known.current!.has(`${f.name}\0${f.created}`));
        if (arrived) setAnnounce(t('files.arrived', { name: arrived.name }));
      }
      known.current = new Set(complete);
      setFiles(message);
    });
  }, [shareBase, linkId, viewOnly, hidden, t]);

  const give = (chosen: FileList | File[]) => {
    for (const file of Array.from(chosen)) {
      setGiving((all) => [...all.filter((g) => g.name !== file.name), { name: file.name, sent: 0 }]);
      void uploadToSession(shareBase, linkId, file, file.name, (sent) =>
        setGiving((all) => all.map((g) => (g.name === file.name ? { ...g, sent } : g))),
      ).then((outcome) => {
        setGiving((all) => all.map((g) => (g.name === file.name ? { ...g, sent: 1, outcome: outcome.ok ? { ok: true } : { ok: false, message: outcome.message } } : g)));
        setAnnounce(outcome.ok ? t('files.uploaded', { name: file.name }) : t('files.failed', { name: file.name, reason: outcome.message }));
      });
    }
  };

  // Files dropped anywhere on the viewer are given to the session.
  useEffect(() => {
    const target = dropRef.current;
    if (!target || viewOnly || !files?.uploads) return;
    const over = (event: DragEvent) => {
      if (event.dataTransfer?.types.includes('Files')) event.preventDefault();
    };
    const drop = (event: DragEvent) => {
      if (!event.dataTransfer?.files.length) return;
      event.preventDefault();
      setOpen(true);
      give(event.dataTransfer.files);
    };
    target.addEventListener('dragover', over);
    target.addEventListener('drop', drop);
    return () => {
      target.removeEventListener('dragover', over);
      target.removeEventListener('drop', drop);
    };
  });

  if (viewOnly || !files || (!files.downloads && !files.uploads)) return null;
  const downloads = files.files.filter((f) => f.kind === 'download');
  const uploads = files.files.filter((f) => f.kind === 'upload');
  const size = (bytes: number) => formatBytes(bytes, i18n.language);

  return (
    <span className="rbk-files">
      <button type="button" className="rbk-button" aria-expanded={open} aria-controls={`${id}-panel`} onClick={() => setOpen(!open)}>
        {t('files.button')}
        {downloads.length > 0 ? <span className="rbk-files__count"> ({downloads.length})</span> : null}
      </button>
      <span className="rbk-viewer__sr-only" role="status" aria-live="polite">
        {announce}
      </span>
      {open ? (
        <div id={`${id}-panel`} className="rbk-files__panel" role="region" aria-label={t('files.title')} onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
          {files.downloads ? (
            <section aria-labelledby={`${id}-downloads`}>
              <h3 id={`${id}-downloads`} className="rbk-files__heading">{t('files.downloads')}</h3>
              {downloads.length === 0 ? <p className="rbk-files__none">{t('files.none')}</p> : null}
              <ul className="rbk-files__list">
                {downloads.map((file) => (
                  <li key={file.name} className="rbk-files__item" data-state={file.state}>
                    {file.state === 'complete' ? (
                      <a className="rbk-files__name" href={sessionFileUrl(shareBase, linkId, file.name)} download={file.name}>
                        {t('files.save', { name: file.name })}
                      </a>
                    ) : (
                      <span className="rbk-files__name">{t('files.arriving', { name: file.name })}</span>
                    )}
                    <span className="rbk-files__size">{size(file.size)}</span>
                  </li>
                ))}
              </ul>
            </section>
          ) : null}
          {files.uploads ? (
            <section aria-labelledby={`${id}-uploads`}>
              <h3 id={`${id}-uploads`} className="rbk-files__heading">{t('files.uploads')}</h3>
              <ul className="rbk-files__list">
                {uploads.map((file) => (
                  <li key={file.name} className="rbk-files__item">
                    <span className="rbk-files__name">{file.name}</span>
                    <span className="rbk-files__size">{size(file.size)}</span>
                  </li>
                ))}
                {giving.filter((g) => !g.outcome?.ok).map((g) => (
                  <li key={`giving-${g.name}`} className="rbk-files__item" data-state={g.outcome ? 'failed' : 'giving'}>
                    {g.outcome ? (
                      <span className="rbk-files__name" role="alert">{t('files.failed', { name: g.name, reason: g.outcome.message })}</span>
                    ) : (
                      <>
                        <span className="rbk-files__name">{t('files.uploading', { name: g.name, percent: Math.round(g.sent * 100) })}</span>
                        <progress className="rbk-files__progress" max={1} value={g.sent} aria-label={g.name} />
                      </>
                    )}
                  </li>
                ))}
              </ul>
              <input ref={picker} type="file" multiple hidden onChange={(e) => e.currentTarget.files && give(e.currentTarget.files)} />
              <button type="button" className="rbk-button" onClick={() => picker.current?.click()}>
                {t('files.give')}
              </button>
              <p className="rbk-files__hint">{t('files.drop')} {t('files.dropHint')}</p>
            </section>
          ) : null}
          <button type="button" className="rbk-button" onClick={() => setOpen(false)}>
            {t('files.close')}
          </button>
        </div>
      ) : null}
    </span>
  );
}
