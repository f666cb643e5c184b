// Shared figures for the benchmarks: percentiles and the one-JSON-object-per-line output.

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function report(bench: string, metric: string, value: number, unit: string, extra: Record<string, unknown> = {}): void {
  const rounded = Number.isInteger(value) ? value : Math.round(value * 10) / 10;
  console.log(JSON.stringify({ bench, metric, value: rounded, unit, ...extra }));
}
