'use client';
// <SessionReplay>: plays a session's recording (issue 35) with its sound, through the proxy route
// by the session's handle: the browser's own <video> controls, a timeline with the session's events
// marked on it, the events as a list (activating one jumps there), speed 1x/2x/4x, and the event
// being played announced politely. A recording still being made plays up to now and says so.
// Given a replay link (`link`, decisions.md 110) it plays from the link's API instead, as the
// engine's viewer site does for `/replay/<token>`.
import { useCallback, useEffect, useId, useMemo, useRef, useState, type CSSProperties, type Ref } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { createReplayLinkClient, type ReplayLinkClient } from '../core/client.js';
import { RemoteBrowserClientError } from '../core/error.js';
import type { ProxyRecording } from '../protocol/proxy.js';
import type { RecordingTimelineEntry } from '../protocol/recordings.js';
import { useRecording } from './hooks/useRecording.js';
import { useRemoteBrowser } from './RemoteBrowserProvider.js';

export interface SessionReplayProps {
  /** The session's handle, as the launcher (or `POST <route>/sessions`) gave it: the recording is read through the provider's proxy route. */
  handle?: string;
  /**
   * A replay link (`<share base>/replay/<token>`, from `POST <route>/sessions/:handle/recording/link`)
   * to play from instead of a handle: its token is the only credential, no route or sign-in is used.
   */
  link?: string;
  /** Called with each new state of the root's `data-state`. */
  onStateChange?: (state: SessionReplayState) => void;
  className?: string;
  style?: CSSProperties;
  ref?: Ref<HTMLElement>;
}

/** What the root's `data-state` says: loading, the recording is shown, or it cannot be (see `data-error`). */
export type SessionReplayState = 'loading' | 'ready' | 'error';

/**
 * Why a recording is not shown (`data-error`): not recorded, removed, not found, the service busy,
 * the media unplayable, another failure; for a replay link, not a valid link or expired.
 */
export type SessionReplayError = 'not_recorded' | 'removed' | 'not_found' | 'busy' | 'media' | 'failed' | 'invalid' | 'expired';

/** Refusals the route or a replay link's API name in `reason`, shown as they are. */
const REASONS: readonly string[] = ['not_recorded', 'removed', 'invalid', 'expired'];

export const REPLAY_SPEEDS = [1, 2, 4] as const;

/** One event of the timeline with where it is in the media (seconds from its start). */
export interface ReplayEvent {
  entry: RecordingTimelineEntry;
  at: number;
}

/**
 * The timeline's events with their places in the media: the time since the recording started,
 * within its length. A session's end is shown once (the engine notes each move to an end: its
 * stopping, then its removal).
 */
export function replayEvents(recording: ProxyRecording): ReplayEvent[] {
  const started = Date.parse(recording.started);
  const length = recording.duration_ms / 1000;
  const firstEnd = recording.timeline.findIndex((entry) => entry.type === 'ended');
  return recording.timeline
    .filter((entry, index) => entry.type !== 'ended' || index === firstEnd)
    .map((entry) => ({ entry, at: Math.min(length, Math.max(0, (Date.parse(entry.time) - started) / 1000)) }))
    .sort((a, b) => a.at - b.at);
}

/** `m:ss`, or `h:mm:ss` from an hour on. */
export function formatReplayTime(seconds: number): string {
  const whole = Math.max(0, Math.floor(Number.isFinite(seconds) ? seconds : 0));
  const [h, m, s] = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}` : `${m}:${String(s).padStart(2, '0')}`;
}

/** What an event was, in the component's language; never page content (the timeline holds none). */
function describe(t: TFunction<'replay'>, entry: RecordingTimelineEntry): string {
  const channel = entry.channel ? t(`channel.${entry.channel}`, { defaultValue: entry.channel }) : '';
  const rights = entry.rights ? ` · ${t(`rights.${entry.rights}`)}` : '';
  switch (entry.type) {
    case 'navigation':
      return t('event.navigation', { title: entry.title || entry.url || '' });
    case 'viewer-joined':
    case 'viewer-left':
      return `${t(`event.${entry.type}`, { channel })}${rights}`;
    case 'refused':
      return t('event.refused', { target: entry.target ?? '' });
    case 'tab-opened':
    case 'tab-closed':
    case 'program-attached':
    case 'program-left':
    case 'ended':
    case 'stopped':
      return t(`event.${entry.type}`);
    default:
      return t('event.other', { type: entry.type });
  }
}

/** The error a failed description read shows. */
function errorOf(error: unknown): SessionReplayError {
  if (!(error instanceof RemoteBrowserClientError)) return 'failed';
  if (REASONS.includes(error.details.reason ?? '')) return error.details.reason as SessionReplayError;
  return error.code === 'denied' && error.details.httpStatus === 404 ? 'not_found' : 'failed';
}

/** Asks the route why the media did not play: the <video> element cannot tell a 503 from a 404. */
async function probeMedia(client: ReplayLinkClient, handle: string): Promise<{ error: SessionReplayError; retryAfter?: number }> {
  const answer = await client.recordingMediaStatus(handle).catch(() => null);
  if (answer?.httpStatus === 503) return { error: 'busy', retryAfter: Math.max(1, answer.retryAfter ?? 5) };
  if (answer?.httpStatus === 404 || answer?.httpStatus === 410) return { error: REASONS.includes(answer.reason ?? '') ? (answer.reason as SessionReplayError) : 'not_found' };
  return { error: 'media' };
}

export function SessionReplay({ handle = '', link, onStateChange, className, style, ref }: SessionReplayProps) {
  const { t } = useTranslation('replay');
  const provided = useRemoteBrowser().client;
  const linkClient = useMemo(() => (link ? createReplayLinkClient(link) : undefined), [link]);
  const client = linkClient ?? provided;
  const recording = useRecording(handle, linkClient);
  const video = useRef<HTMLVideoElement>(null);
  const titleId = useId();
  const eventsId = useId();
  /** Bumped to load the media again (up to now, or after a failure). */
  const [load, setLoad] = useState(0);
  const [mediaError, setMediaError] = useState<{ error: SessionReplayError; retryAfter?: number } | null>(null);
  const [position, setPosition] = useState(0);
  const [mediaLength, setMediaLength] = useState(0);
  const [speed, setSpeed] = useState<number>(1);
  const [announced, setAnnounced] = useState('');

  const data = recording.data;
  const events = useMemo(() => (data ? replayEvents(data) : []), [data]);
  const length = Math.max(mediaLength, (data?.duration_ms ?? 0) / 1000);
  const currentIndex = events.findLastIndex((event) => event.at <= position + 0.05);
  const error: SessionReplayError | null = recording.isError && !data ? errorOf(recording.error) : (mediaError?.error ?? null);
  const state: SessionReplayState = error ? 'error' : data ? 'ready' : 'loading';
  const mediaUrl = `${client.recordingMediaUrl(handle)}${load ? `${client.recordingMediaUrl(handle).includes('?') ? '&' : '?'}load=${load}` : ''}`;

  useEffect(() => onStateChange?.(state), [state, onStateChange]);

  // The event being played, announced when it changes (not at the first showing).
  const lastIndex = useRef<number | null>(null);
  useEffect(() => {
    if (lastIndex.current !== null && currentIndex !== lastIndex.current && currentIndex >= 0) setAnnounced(t('current', { event: describe(t, events[currentIndex]!.entry) }));
    lastIndex.current = currentIndex;
  }, [currentIndex, events, t]);

  // A busy service said when to try again: the media is loaded again then.
  useEffect(() => {
    if (mediaError?.error !== 'busy') return;
    const timer = setTimeout(() => {
      setMediaError(null);
      setLoad((n) => n + 1);
    }, (mediaError.retryAfter ?? 5) * 1000);
    return () => clearTimeout(timer);
  }, [mediaError]);

  const seek = useCallback((seconds: number) => {
    const element = video.current;
    if (!element) return;
    element.currentTime = seconds;
    setPosition(seconds);
  }, []);

  const changeSpeed = (value: number) => {
    const element = video.current;
    if (element) {
      element.defaultPlaybackRate = value;
      element.playbackRate = value;
    }
    setSpeed(value);
  };

  const retry = () => {
    setMediaError(null);
    if (recording.isError) void recording.refetch();
    setLoad((n) => n + 1);
  };

  const classes = ['rbk-root', 'rbk-replay', className].filter(Boolean).join(' ');
  return (
    <section ref={ref} className={classes} style={style} data-state={state} data-error={error ?? undefined} data-recording={data?.state} aria-labelledby={titleId}>
      <h2 id={titleId} className="rbk-replay__title">
        {t('title')}
      </h2>
      {state === 'loading' ? (
        <p className="rbk-replay__note" role="status">
          {t('loading')}
        </p>
      ) : null}
      {error ? (
        <div className="rbk-replay__error" role="alert">
          <p>{t(`error.${error}`, { seconds: mediaError?.retryAfter ?? 5, message: recording.error?.message ?? '' })}</p>
          {error === 'failed' || error === 'media' ? (
            <button type="button" className="rbk-button" onClick={retry}>
              {t('retry')}
            </button>
          ) : null}
        </div>
      ) : null}
      {data && !error ? (
        <>
          {data.state !== 'ended' ? (
            <p className="rbk-replay__note" role="status">
              {t('live')}{' '}
              <button type="button" className="rbk-button" onClick={() => setLoad((n) => n + 1)}>
                {t('loadUpToNow')}
              </button>
            </p>
          ) : null}
          <video
            key={load}
            ref={video}
            className="rbk-replay__video"
            src={mediaUrl}
            controls
            playsInline
            preload="auto"
            aria-label={t('video')}
            onLoadedMetadata={(event) => {
              const element = event.currentTarget;
              element.defaultPlaybackRate = speed;
              element.playbackRate = speed;
              if (Number.isFinite(element.duration)) setMediaLength(element.duration);
              if (position > 0) element.currentTime = Math.min(position, Number.isFinite(element.duration) ? element.duration : position);
            }}
            onDurationChange={(event) => Number.isFinite(event.currentTarget.duration) && setMediaLength(event.currentTarget.duration)}
            onTimeUpdate={(event) => setPosition(event.currentTarget.currentTime)}
            onSeeked={(event) => setPosition(event.currentTarget.currentTime)}
            onRateChange={(event) => setSpeed(event.currentTarget.playbackRate)}
            onError={() => void probeMedia(client, handle).then(setMediaError)}
          />
          <div className="rbk-replay__bar">
            <div className="rbk-replay__scrubber">
              <input
                type="range"
                className="rbk-replay__range"
                min={0}
                max={Math.max(0.1, length)}
                step={0.1}
                value={Math.min(position, length)}
                aria-label={t('timeline')}
                aria-valuetext={t('position', { time: formatReplayTime(position), total: formatReplayTime(length) })}
                onChange={(event) => seek(Number(event.currentTarget.value))}
              />
              {/* The marks repeat the list below, which is what assistive technology reads. */}
              <div className="rbk-replay__marks" aria-hidden="true">
                {events.map((event, index) => (
                  <span key={index} className="rbk-replay__mark" data-type={event.entry.type} style={{ insetInlineStart: `${length > 0 ? (event.at / length) * 100 : 0}%` }} title={describe(t, event.entry)} />
                ))}
              </div>
            </div>
            <span className="rbk-replay__time" aria-hidden="true">
              {formatReplayTime(position)} / {formatReplayTime(length)}
            </span>
            <div className="rbk-replay__speeds" role="group" aria-label={t('speed')}>
              {REPLAY_SPEEDS.map((value) => (
                <button key={value} type="button" className="rbk-button" aria-pressed={speed === value} onClick={() => changeSpeed(value)}>
                  {`${value}×`}
                </button>
              ))}
            </div>
          </div>
          <h3 id={eventsId} className="rbk-replay__heading">
            {t('events')}
          </h3>
          {events.length === 0 ? <p className="rbk-replay__note">{t('noEvents')}</p> : null}
          <ol className="rbk-replay__events" aria-labelledby={eventsId}>
            {events.map((event, index) => (
              <li key={index}>
                <button
                  type="button"
                  className="rbk-replay__event"
                  data-type={event.entry.type}
                  aria-current={index === currentIndex ? 'true' : undefined}
                  onClick={() => seek(event.at)}
                >
                  <span className="rbk-replay__event-time">{formatReplayTime(event.at)}</span>
                  <span className="rbk-replay__event-what">{describe(t, event.entry)}</span>
                  {event.entry.url ? <span className="rbk-replay__event-url">{event.entry.url}</span> : null}
                </button>
              </li>
            ))}
          </ol>
          <p className="rbk-viewer__sr-only" aria-live="polite">
            {announced}
          </p>
        </>
      ) : null}
    </section>
  );
}
