// The engine's Prometheus metrics (decisions.md 60; names and labels in docs/operations.md): one
// prom-client registry per engine, read by the operator listener's /metrics. Counters and
// histograms are moved where things happen; gauges are read from their sources at each scrape.
// No label ever carries a key, a link id, a URL or a session id: every label value is one of a
// short list (statuses, browsers, reasons, route templates).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { HttpAnswers } from './http-answers.js';

/** What the gauges read at each scrape (this node's view). */
export interface MetricSources {
  /** This node's sessions that hold a slot or are ending, by status and browser. */
  sessions(): Promise<Array<{ status: string; browser: string; n: number }>>;
  /** Attachments to this node's sessions, by kind (viewer, listener, program). */
  attachments(): Record<string, number>;
  /** Sessions this node may run at once (null: no limit). */
  capacity(): number | null;
  /** This node's state in the store: active, draining or lost. */
  nodeState(): Promise<string | undefined>;
  /** The warm pool: ready displays and browsers, and the memory they hold (runtime.warmStats()). */
  warm(): { displays: number; browsers: number; memoryMb: number };
}

/** Seconds: a create answers in tens of ms; a cold Chromium start takes one to a few seconds. */
const START_BUCKETS = [0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 13, 20, 30, 60];

export class EngineMetrics {
  readonly registry = new Registry();
  readonly sessionStarts: Counter<'browser' | 'start'>;
  readonly startSeconds: Histogram<'browser' | 'start'>;
  readonly sessionEnds: Counter<'browser' | 'category'>;
  readonly createRefusals: Counter<'reason'>;
  readonly egressBytes: Counter;
  readonly residentialBytes: Counter;
  /** HTTP answers by route template, method and status, and their times (http-answers.ts). */
  readonly http = new HttpAnswers();
  readonly rateLimited: Counter<'limit'>;
  readonly storeErrors: Counter<'kind'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  /** Wakes from standby (decisions.md 141), by outcome (`woken`, `failed`: the session ended). */
  readonly standbyWakes: Counter<'outcome'>;
  /** Resumes from hibernation (decisions.md 168), by outcome (`resumed`, `failed`: the session ended), and their time. */
  readonly hibernationResumes: Counter<'outcome'>;
  readonly resumeSeconds: Histogram;

  constructor(nodeId: string, sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'rbk_' });
    new Gauge({ name: 'rbk_node_info', help: 'This engine as a node: 1, with its id', labelNames: ['node'], registers }).set({ node: nodeId }, 1);

    new Gauge({
      name: 'rbk_sessions',
      help: "This node's sessions that are starting, running or stopping, by status and browser",
      labelNames: ['status', 'browser'],
      registers,
      async collect() {
        this.reset();
        for (const { status, browser, n } of await sources.sessions()) this.set({ status, browser }, n);
      },
    });
    this.sessionStarts = new Counter({ name: 'rbk_session_starts_total', help: 'Sessions that became running on this node, by browser and start (cold, warm-display, warm-browser)', labelNames: ['browser', 'start'], registers });
    this.startSeconds = new Histogram({ name: 'rbk_session_start_seconds', help: 'From the create to running, by browser and start', labelNames: ['browser', 'start'], buckets: START_BUCKETS, registers });
    this.sessionEnds = new Counter({ name: 'rbk_session_ends_total', help: 'Sessions that ended (or failed to start) as this node saw it, by browser and category of reason', labelNames: ['browser', 'category'], registers });
    this.createRefusals = new Counter({ name: 'rbk_session_create_refusals_total', help: 'Creates answered with a refusal, by reason', labelNames: ['reason'], registers });
    new Gauge({
      name: 'rbk_attachments',
      help: "Viewers, sound listeners and programs attached to this node's sessions",
      labelNames: ['kind'],
      registers,
      collect() {
        for (const [kind, n] of Object.entries(sources.attachments())) this.set({ kind }, n);
      },
    });
    this.hibernationResumes = new Counter({ name: 'rbk_hibernation_resumes_total', help: 'Hibernated sessions resumed on this node, by outcome (resumed; failed: the session ended)', labelNames: ['outcome'], registers });
    this.resumeSeconds = new Histogram({ name: 'rbk_hibernation_resume_seconds', help: 'From the first attachment to a hibernated session running again on this node', buckets: START_BUCKETS, registers });
    this.standbyWakes = new Counter({ name: 'rbk_standby_wakes_total', help: 'Sessions woken from standby on this node, by outcome (woken; failed: the session ended)', labelNames: ['outcome'], registers });
    this.egressBytes = new Counter({ name: 'rbk_egress_bytes_total', help: "Bytes sessions on this node sent and received through their egress route (written every second)", registers });
    this.residentialBytes = new Counter({ name: 'rbk_residential_bytes_total', help: 'Of those, the bytes of residential connections', registers });
    new Gauge({
      name: 'rbk_node_capacity',
      help: 'Sessions this node may run at once (absent: no limit)',
      registers,
      collect() {
        const capacity = sources.capacity();
        if (capacity === null) this.reset();
        else this.set(capacity);
      },
    });
    new Gauge({
      name: 'rbk_node_load',
      help: 'Sessions this node starts or runs now',
      registers,
      async collect() {
        const active = (await sources.sessions()).filter((s) => s.status === 'starting' || s.status === 'running');
        this.set(active.reduce((sum, s) => sum + s.n, 0));
      },
    });
    new Gauge({
      name: 'rbk_node_draining',
      help: '1 while this node drains (takes no new session) or was declared lost, else 0',
      registers,
      async collect() {
        const state = await sources.nodeState();
        this.set(state === 'active' ? 0 : 1);
      },
    });
    new Gauge({
      name: 'rbk_warm_pool',
      help: 'Ready warm displays and browsers on this node',
      labelNames: ['kind'],
      registers,
      collect() {
        const warm = sources.warm();
        this.set({ kind: 'displays' }, warm.displays);
        this.set({ kind: 'browsers' }, warm.browsers);
      },
    });
    new Gauge({
      name: 'rbk_warm_pool_memory_bytes',
      help: 'Memory the ready warm slots on this node hold (their cgroups), within warm.memoryMb',
      registers,
      collect() {
        this.set(sources.warm().memoryMb * 1024 * 1024);
      },
    });
    this.http.register(this.registry);
    this.rateLimited = new Counter({ name: 'rbk_rate_limited_total', help: 'Requests refused by a rate limit: api_key, share_lookup, replay_lookup, v6_client', labelNames: ['limit'], registers });
    this.storeErrors = new Counter({ name: 'rbk_store_errors_total', help: 'Requests that failed on the database: busy, disk_full, unreachable', labelNames: ['kind'], registers });
    this.webhookDeliveries = new Counter({ name: 'rbk_webhook_deliveries_total', help: 'Webhook delivery attempts by this node: delivered, retry, abandoned, refused (egress rules)', labelNames: ['outcome'], registers });
  }

  /** A gauge a feature adds (module.ts `meters`), read at each scrape. */
  addGauge(meter: { name: string; help: string; read(): Promise<number> }): void {
    new Gauge({
      name: meter.name,
      help: meter.help,
      registers: [this.registry],
      async collect() {
        this.set(await meter.read());
      },
    });
  }

  /** The exposition text for /metrics. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
