'use client';
// <UsageMeters>: the account's usage as meters (running sessions, sessions this cycle, residential
// data) with the cycle's dates and a per-subscription breakdown, for users the route shares it with.
import { useId, type CSSProperties, type Ref } from 'react';
import { useTranslation } from 'react-i18next';
import { RemoteBrowserClientError } from '../core/error.js';
import { nextCycleReset } from '../protocol/cycle.js';
import type { Pool, UsageMeters as UsageMeterValues } from '../protocol/index.js';
import { useUsage } from './hooks/useUsage.js';
import { useRemoteBrowser } from './RemoteBrowserProvider.js';

export interface UsageMetersProps {
  /** Show one block per subscription (pool) when the account has more than one. Default true. */
  showPools?: boolean;
  className?: string;
  style?: CSSProperties;
  ref?: Ref<HTMLElement>;
}

/** What the root's `data-state` says: the meters are loading, could not be read, or are shown. */
export type UsageMetersState = 'loading' | 'error' | 'ready';

// ---------------------------------------------------------------------------------------------
// Numbers, bytes and dates in the component's language

const BYTES_PER_MB = 1024 * 1024; // the engine counts residential MB as MiB

function formatCount(value: number, language: string): string {
  return new Intl.NumberFormat(language).format(value);
}

/** Bytes as MB below 1 GB, else GB (1 GB = 1024 MB), with a decimal only where it tells something. */
export function formatBytes(bytes: number, language: string): string {
  const mb = bytes / BYTES_PER_MB;
  if (mb >= 1024) {
    const gb = mb / 1024;
    return new Intl.NumberFormat(language, { style: 'unit', unit: 'gigabyte', maximumFractionDigits: gb < 10 ? 2 : 1 }).format(gb);
  }
  return new Intl.NumberFormat(language, { style: 'unit', unit: 'megabyte', maximumFractionDigits: mb < 10 ? 1 : 0 }).format(mb);
}

function utcDay(day: string): Date {
  return new Date(`${day}T00:00:00Z`);
}

/**
 * The cycle dates of the totals or of one pool. `cycle_end` (YYYY-MM-DD, the day the current cycle
 * ends and the next one starts) comes from engines that send it; older ones send only the start.
 */
interface CycleDays {
  cycle_start: string;
  cycle_end?: string | undefined;
}

/** When the cycle resets: the engine's `cycle_end` as it says it, else computed from the start. */
function cycleReset(cycle: CycleDays): string {
  return cycle.cycle_end ?? nextCycleReset(cycle.cycle_start);
}

function formatDay(day: string, language: string): string {
  return new Intl.DateTimeFormat(language, { dateStyle: 'long', timeZone: 'UTC' }).format(utcDay(day));
}

/**
 * The residential allowance to show. The totals are `null` when any pool's is (decisions.md 11),
 * but a pool without an allowance adds nothing to the others': the account's allowance is the sum
 * of the pools that have one, and "not included" only when none has.
 */
function residentialAllowanceMb(usage: UsageMeterValues & { pools: Pool[] }): number | null {
  if (usage.residential_cycle_mb_limit !== null) return usage.residential_cycle_mb_limit;
  const limits = usage.pools.map((pool) => pool.residential_cycle_mb_limit).filter((limit): limit is number => limit !== null);
  return limits.length ? limits.reduce((a, b) => a + b, 0) : null;
}

/** The route's own refusal to share the meters with this user (its `usage` policy said no). */
function isNotShared(error: unknown): boolean {
  return error instanceof RemoteBrowserClientError && error.code === 'denied' && error.details.httpStatus === 403;
}

// ---------------------------------------------------------------------------------------------
// One meter

interface MeterProps {
  kind: 'running' | 'cycle' | 'residential';
  label: string;
  /** Id of the pool's heading, so a pool's meter is named after its plan too. */
  contextId?: string;
  value: number;
  /** null: nothing to measure against (no cap, or not included): the text alone. */
  max: number | null;
  valueText: string;
  note?: string;
}

function Meter({ kind, label, contextId, value, max, valueText, note }: MeterProps) {
  const labelId = useId();
  const full = max !== null && value >= max;
  const percent = max === null ? 0 : max === 0 ? 100 : Math.min(100, (value / max) * 100);
  return (
    <div className="rbk-meters__meter" data-kind={kind} data-full={full || undefined} data-limitless={max === null || undefined}>
      <div className="rbk-meters__meter-head">
        <span id={labelId} className="rbk-meters__label">
          {label}
        </span>
        {/* The meter below says the same to assistive technology. */}
        <span className="rbk-meters__value" aria-hidden={max !== null || undefined}>
          {valueText}
        </span>
      </div>
      {max !== null ? (
        <div
          role="meter"
          className="rbk-meters__track"
          aria-labelledby={contextId ? `${contextId} ${labelId}` : labelId}
          aria-valuemin={0}
          aria-valuemax={max}
          aria-valuenow={Math.min(value, max)}
          aria-valuetext={valueText}
        >
          <div className="rbk-meters__fill" style={{ inlineSize: `${percent}%` }} />
        </div>
      ) : null}
      {note ? <span className="rbk-meters__note">{note}</span> : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// The three meters of the totals or of one pool

function MeterGroup({ meters, residentialMb, contextId }: { meters: UsageMeterValues; residentialMb: number | null; contextId?: string }) {
  const { t } = useTranslation('meters');
  const { language } = useRemoteBrowser();
  const count = (value: number) => formatCount(value, language);
  const residentialUsed = meters.residential_bytes_used_cycle;
  const residentialLimitBytes = residentialMb === null ? null : residentialMb * BYTES_PER_MB;
  return (
    <div className="rbk-meters__group">
      <Meter
        kind="running"
        label={t('running')}
        {...(contextId ? { contextId } : {})}
        value={meters.running_sessions_used}
        max={meters.running_session_limit}
        valueText={t('of', { used: count(meters.running_sessions_used), limit: count(meters.running_session_limit) })}
        note={t('remaining', { count: count(meters.running_sessions_remaining) })}
      />
      <Meter
        kind="cycle"
        label={t('cycle')}
        {...(contextId ? { contextId } : {})}
        value={meters.cycle_sessions_used}
        max={meters.cycle_session_limit}
        valueText={
          meters.cycle_session_limit === null
            ? t('unlimited', { used: count(meters.cycle_sessions_used) })
            : t('of', { used: count(meters.cycle_sessions_used), limit: count(meters.cycle_session_limit) })
        }
        {...(meters.cycle_sessions_remaining === null ? {} : { note: t('remaining', { count: count(meters.cycle_sessions_remaining) }) })}
      />
      <Meter
        kind="residential"
        label={t('residential')}
        {...(contextId ? { contextId } : {})}
        // In MB, the unit of the allowance; the text says it in MB or GB.
        value={Math.round((residentialUsed / BYTES_PER_MB) * 10) / 10}
        max={residentialMb}
        valueText={
          residentialLimitBytes === null
            ? t('notIncluded')
            : t('of', { used: formatBytes(residentialUsed, language), limit: formatBytes(residentialLimitBytes, language) })
        }
        {...(residentialLimitBytes === null ? {} : { note: t('remaining', { count: formatBytes(Math.max(0, residentialLimitBytes - residentialUsed), language) }) })}
      />
    </div>
  );
}

function CycleDates({ cycle }: { cycle: CycleDays }) {
  const { t } = useTranslation('meters');
  const { language } = useRemoteBrowser();
  return (
    <p className="rbk-meters__cycle">
      <span>{t('cycleStart', { date: formatDay(cycle.cycle_start, language) })}</span>
      <span className="rbk-meters__cycle-separator" aria-hidden="true">
        {' · '}
      </span>
      <span>{t('nextReset', { date: formatDay(cycleReset(cycle), language) })}</span>
    </p>
  );
}

// ---------------------------------------------------------------------------------------------
// Per-pool breakdown

function PoolList({ pools, cycle }: { pools: Array<Pool & CycleDays>; cycle: CycleDays }) {
  const { t } = useTranslation('meters');
  const headingId = useId();
  const poolId = useId();
  return (
    <section className="rbk-meters__pools" aria-labelledby={headingId}>
      <h3 id={headingId} className="rbk-meters__pools-title">
        {t('pools')}
      </h3>
      <ul className="rbk-meters__pool-list">
        {pools.map((pool, index) => (
          <li key={pool.subscription_id} className="rbk-meters__pool" data-plan={pool.plan_id}>
            <h4 id={`${poolId}-${index}`} className="rbk-meters__pool-title">
              {pool.plan_name}
            </h4>
            <MeterGroup meters={pool} residentialMb={pool.residential_cycle_mb_limit} contextId={`${poolId}-${index}`} />
            {/* Subscriptions can have cycles of their own; the account's is the first one's. */}
            {pool.cycle_start !== cycle.cycle_start || cycleReset(pool) !== cycleReset(cycle) ? <CycleDates cycle={pool} /> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

// ---------------------------------------------------------------------------------------------
// The component

export function UsageMeters({ showPools = true, className, style, ref }: UsageMetersProps) {
  const { t } = useTranslation('meters');
  const { language } = useRemoteBrowser();
  const usage = useUsage();
  const titleId = useId();
  const { data, error, isPending, isFetching } = usage;
  const busy = isFetching && !isPending;
  const state: UsageMetersState = isPending ? 'loading' : error ? 'error' : 'ready';
  const notShared = isNotShared(error);
  const refresh = () => {
    if (!isFetching) void usage.refetch();
  };
  const onePlan = data?.pools.length === 1 ? data.pools[0]!.plan_name : null;

  return (
    <section
      ref={ref}
      className={['rbk-root', 'rbk-meters', className].filter(Boolean).join(' ')}
      style={style}
      lang={language}
      aria-labelledby={titleId}
      aria-busy={isFetching || undefined}
      data-state={state}
    >
      <div className="rbk-meters__header">
        <h2 id={titleId} className="rbk-meters__title">
          {t('title')}
        </h2>
        {onePlan ? <span className="rbk-meters__plan">{onePlan}</span> : null}
        {data && !notShared ? (
          <button type="button" className="rbk-button rbk-meters__refresh" onClick={refresh} aria-disabled={busy || undefined} data-busy={busy || undefined}>
            {t('refresh')}
          </button>
        ) : null}
      </div>

      {isPending ? (
        <p className="rbk-meters__status" role="status">
          {t('loading')}
        </p>
      ) : null}

      {/* Refreshing keeps the meters in place; this tells assistive technology it is happening. */}
      <p className="rbk-meters__sr-only" role="status">
        {busy ? t('loading') : ''}
      </p>

      {notShared ? <p className="rbk-meters__notice">{t('notShared')}</p> : null}

      {error && !notShared ? (
        <div className="rbk-meters__error" role="alert">
          <p className="rbk-meters__error-text">{t('error', { message: error.message })}</p>
          <button type="button" className="rbk-button" onClick={refresh} aria-disabled={busy || undefined} data-busy={busy || undefined}>
            {t('retry')}
          </button>
        </div>
      ) : null}

      {data && !notShared ? (
        data.has_plan ? (
          <>
            <MeterGroup meters={data} residentialMb={residentialAllowanceMb(data)} />
            <CycleDates cycle={data} />
            {showPools && data.pools.length > 1 ? <PoolList pools={data.pools} cycle={data} /> : null}
          </>
        ) : (
          <p className="rbk-meters__notice">{t('noPlan')}</p>
        )
      ) : null}
    </section>
  );
}
