// Billing cycles (decisions.md 13): one calendar month from the subscription's cycle start,
// the day of month kept and clamped to the month's last day. All dates are UTC. Plain
// TypeScript: the engine computes cycles with it and <UsageMeters> the next reset an older
// engine does not send, so the rule is written once.

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/** Day `day` of the month `months` after `date`'s month, clamped to that month's last day. */
function monthsAfter(date: Date, months: number, day: number): Date {
  const month = date.getUTCMonth() + months;
  const year = date.getUTCFullYear() + Math.floor(month / 12);
  const normalizedMonth = ((month % 12) + 12) % 12;
  return new Date(Date.UTC(year, normalizedMonth, Math.min(day, daysInMonth(year, normalizedMonth))));
}

/** The anchor's day in the month `months` after the anchor's month, clamped. */
function shifted(anchor: Date, months: number): Date {
  return monthsAfter(anchor, months, anchor.getUTCDate());
}

export function parseDay(day: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== day) throw new Error(`"${day}" is not a date of the form YYYY-MM-DD`);
  return date;
}

export function formatDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export interface Cycle {
  /** YYYY-MM-DD */
  start: string;
  /** YYYY-MM-DD: the day the cycle ends, which is the next cycle's start. */
  end: string;
  startMs: number;
  endMs: number;
}

/** The cycle that contains `nowMs` for a subscription anchored at `anchorDay`. */
export function currentCycle(anchorDay: string, nowMs: number): Cycle {
  const anchor = parseDay(anchorDay);
  let months = 0;
  if (nowMs >= anchor.getTime()) {
    const now = new Date(nowMs);
    months = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
    if (shifted(anchor, months).getTime() > nowMs) months -= 1;
  }
  // Before the anchor day comes, the first cycle (months = 0) is the current one.
  const start = shifted(anchor, months);
  const end = shifted(anchor, months + 1);
  return { start: formatDay(start), end: formatDay(end), startMs: start.getTime(), endMs: end.getTime() };
}

/**
 * The next reset when the engine does not say (no `cycle_end`): one calendar month after the cycle
 * start, the day of month kept and clamped to that month's last day (decisions.md 13). The day kept
 * is the subscription's anchor, and a start on its month's last day may be an anchor on the 29th to
 * 31st clamped (anchored on 31 January, the cycle starting 28 February resets on 31 March): such a
 * start is taken as anchored on the month's end, so the date shown is never before the engine's
 * reset (for an anchor on the 28th to 30th it can be one to three days after it).
 */
export function nextCycleReset(cycleStart: string): string {
  // Read as it comes (not checked as parseDay does): the date is the engine's.
  const start = new Date(`${cycleStart}T00:00:00Z`);
  const lastDay = start.getUTCDate() === daysInMonth(start.getUTCFullYear(), start.getUTCMonth());
  return formatDay(monthsAfter(start, 1, lastDay ? 31 : start.getUTCDate()));
}
