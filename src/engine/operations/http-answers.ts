// The engine's HTTP answers as metrics (decisions.md 60): `rbk_http_requests_total` by route
// template, method and status, and `rbk_http_request_duration_seconds` by route template and
// method. Each answer adds to plain numbers here; prom-client reads them only at a scrape, through
// the interface its registry reads every metric by (`get()`). Moving prom-client's own counter
// and histogram on every answer cost the status poll 8-12 % of its requests a second (their
// children hash the labels on each call); these additions cost about 1 % (docs/benchmarks.md,
// "Metrics and logs on against off").
import type { Metric, MetricValue, Registry } from 'prom-client';

export const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** The answers of one route template and method. */
interface RouteAnswers {
  readonly route: string;
  readonly method: string;
  readonly byStatus: Map<number, number>;
  /** Answers per bucket (not cumulative); the last one is over the largest bound. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/** What prom-client's registry reads of a metric: its name, help, type and current values. */
interface ReadMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): { name: string; help: string; type: 'counter' | 'histogram'; aggregator: 'sum'; values: Array<MetricValue<string> & { metricName?: string }> };
}

export class HttpAnswers {
  private readonly routes = new Map<string, RouteAnswers>();

  /** Adds one answer: its route template, method, status code and time to answer in seconds. */
  add(route: string, method: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    let answers = this.routes.get(key);
    if (!answers) this.routes.set(key, (answers = { route, method, byStatus: new Map(), buckets: new Float64Array(HTTP_BUCKETS.length + 1), sum: 0, count: 0 }));
    answers.byStatus.set(status, (answers.byStatus.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[bucket]!) bucket++;
    answers.buckets[bucket]!++;
    answers.sum += seconds;
    answers.count++;
  }

  /** Registers the two metrics in `registry`. */
  register(registry: Registry): void {
    for (const metric of [this.requests(), this.durations()]) registry.registerMetric(metric as unknown as Metric);
  }

  private requests(): ReadMetric {
    const name = 'rbk_http_requests_total';
    const help = 'HTTP requests answered, by route template, method and status code';
    return {
      name,
      help,
      type: 'counter',
      aggregator: 'sum',
      get: () => ({
        name,
        help,
        type: 'counter',
        aggregator: 'sum',
        values: [...this.routes.values()].flatMap(({ route, method, byStatus }) => [...byStatus].map(([status, value]) => ({ labels: { route, method, status: String(status) }, value }))),
      }),
    };
  }

  private durations(): ReadMetric {
    const name = 'rbk_http_request_duration_seconds';
    const help = 'Time to answer an HTTP request, by route template and method';
    return {
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      get: () => ({
        name,
        help,
        type: 'histogram',
        aggregator: 'sum',
        values: [...this.routes.values()].flatMap(({ route, method, buckets, sum, count }) => {
          let below = 0;
          const bounds = [...HTTP_BUCKETS.map(String), '+Inf'].map((le, i) => ({ metricName: `${name}_bucket`, labels: { le, route, method }, value: (below += buckets[i]!) }));
          return [...bounds, { metricName: `${name}_sum`, labels: { route, method }, value: sum }, { metricName: `${name}_count`, labels: { route, method }, value: count }];
        }),
      }),
    };
  }
}
