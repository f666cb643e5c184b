// Billing cycles (decisions.md 13): one calendar month from the subscription's cycle start,
// the day of month kept and clamped to the month's last day. All dates are UTC.

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/** The anchor's day in the month `months` after the anchor's month, clamped. */
function shifted(anchor: Date, months: number): Date {
  const year = anchor.getUTCFullYear();
  const month = anchor.getUTCMonth() + months;
  const normalizedYear = year + Math.floor(month / 12);
  const normalizedMonth = ((month % 12) + 12) % 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(normalizedYear, normalizedMonth));
  return new Date(Date.UTC(normalizedYear, normalizedMonth, day));
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
