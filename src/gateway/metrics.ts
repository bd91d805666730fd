import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { SandboxQueue } from "../code-mode/sandbox-queue.js";
import type { Hub, ServerStatus } from "../hub/hub.js";
import type { ResultCache } from "../interceptors/result-cache.js";
import { STANDARD_METHOD_TABLE } from "../protocol/method-table.js";
import { DurationHistogram, type DurationSeries } from "./duration-histogram.js";

/** How a request ended: answered, failed (JSON-RPC error), or a tool result with `isError`. */
export type RequestOutcome = "ok" | "error" | "tool_error";

/** One finished request, as {@link GatewayMetrics.observeRequest} records it. */
export interface RequestObservation {
  /** The JSON-RPC method; methods outside MCP's request set are recorded as `other`. */
  method: string;
  /** The upstream server the request went to, when it went to one. */
  server?: string;
  /** The exposed tool name; pass only names the catalog resolved (they are bounded). */
  tool?: string;
  outcome: RequestOutcome;
  seconds: number;
}

/** Options of {@link GatewayMetrics}. */
export interface GatewayMetricsOptions {
  /**
   * Add Node's process metrics (`process_*`, `nodejs_*`). They are collected once per
   * process, in a registry shared by every `GatewayMetrics`, since their collectors (a GC
   * observer, an event-loop monitor) cannot be stopped. Default `true`.
   */
  processMetrics?: boolean;
  /** Most distinct `(method, server, tool)` series; past it new tools count as `other`. Default 2000. */
  maxSeries?: number;
  /**
   * The methods counted under their own name (the bounded values of the `method` label); others
   * count as `other`. Default: the standard MCP methods (pass a gateway's `methods.names()`).
   */
  methods?: Iterable<string>;
}

const STATES: ReadonlyArray<ServerStatus["state"]> = [
  "idle",
  "starting",
  "ready",
  "failed",
  "reconnecting",
  "stopped",
  "disabled",
];

/** 0.5 ms to 60 s. */
const OUTCOMES: readonly RequestOutcome[] = ["ok", "error", "tool_error"];

const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

interface Series {
  readonly labels: { method: string; server: string; tool: string };
  /**
   * Requests by outcome not yet added to `mcplex_requests_total`: counted here, added when the
   * counter is read (its `collect`). prom-client's `inc` builds and checks its label key on
   * every call (about 3k instructions a request under callgrind).
   */
  ok: number;
  error: number;
  tool_error: number;
  duration: DurationSeries;
}

let processRegistry: Registry | undefined;

function sharedProcessRegistry(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The gateway's Prometheus metrics, in a registry of its own (never prom-client's global
 * one, so two gateways in one process do not collide). Request series are cached per
 * label combination, so {@link observeRequest} costs two increments and no lookups by
 * label object.
 *
 * @example
 * const metrics = new GatewayMetrics();
 * const untrack = metrics.trackHub(hub);
 * metrics.observeRequest({ method: "tools/call", server: "github", tool: "github__search", outcome: "ok", seconds: 0.12 });
 * const { contentType, body } = await metrics.render(); // GET /metrics
 */
export class GatewayMetrics {
  /** The registry holding the gateway's metrics; add your own to it if you like. */
  readonly registry = new Registry();
  readonly #processMetrics: boolean;
  readonly #maxSeries: number;
  readonly #methods: ReadonlySet<string>;
  readonly #requests: Counter<"method" | "server" | "tool" | "outcome">;
  readonly #duration: DurationHistogram;
  readonly #state: Gauge<"server" | "state">;
  readonly #decisions: Counter<"by" | "name" | "effect">;
  readonly #reconnects: Counter<"server">;
  readonly #pinChanges: Gauge<"server" | "held">;
  readonly #sessions: Gauge<"transport">;
  readonly #sessionLimits: Counter<"transport" | "outcome">;
  readonly #listenStreams: Gauge;
  readonly #budget: Gauge<"state">;
  readonly #connections: Gauge;
  readonly #limitRefusals: Counter<"limit">;
  /** Refusals already counted, by limit: the sources keep running totals. */
  readonly #refusalsSeen = new Map<string, number>();
  readonly #cacheLookups: Counter<"server" | "outcome">;
  readonly #cacheEntries: Gauge<"server">;
  readonly #codeScripts: Gauge<"state">;
  readonly #codeBusy: Counter<"reason">;
  readonly #codeQueue: Histogram;
  /** Brings the state series of each tracked hub up to date (run before each render). */
  readonly #syncs = new Set<() => void>();
  /** method → server → tool → series. */
  readonly #series = new Map<string, Map<string, Map<string, Series>>>();
  #seriesCount = 0;

  constructor(options: GatewayMetricsOptions = {}) {
    this.#processMetrics = options.processMetrics ?? true;
    this.#maxSeries = options.maxSeries ?? 2000;
    this.#methods = new Set(options.methods ?? STANDARD_METHOD_TABLE.names());
    const registers = [this.registry];
    this.#requests = new Counter({
      name: "mcplex_requests_total",
      help: "Requests answered by the gateway, by method, upstream server, tool and outcome.",
      labelNames: ["method", "server", "tool", "outcome"],
      registers,
      collect: () => this.#addRequests(),
    });
    this.#duration = new DurationHistogram(
      "mcplex_request_duration_seconds",
      "Time from receiving a request to answering it.",
      DURATION_BUCKETS,
    );
    // The registry writes out any object with prom-client's metric methods (see DurationHistogram).
    this.registry.registerMetric(this.#duration as unknown as Histogram);
    this.#state = new Gauge({
      name: "mcplex_upstream_state",
      help: "1 for the current state of each upstream server, 0 for the others.",
      labelNames: ["server", "state"],
      registers,
    });
    this.#decisions = new Counter({
      name: "mcplex_decisions_total",
      help: "Decisions of policies (by rule and effect) and guardrails (by guardrail and outcome); never by caller.",
      labelNames: ["by", "name", "effect"],
      registers,
    });
    this.#reconnects = new Counter({
      name: "mcplex_upstream_reconnects_total",
      help: "Times an upstream server came back (reconnecting to ready).",
      labelNames: ["server"],
      registers,
    });
    this.#pinChanges = new Gauge({
      name: "mcplex_pin_changes",
      help: "Tools of a pinned server (pin:) that differ from those approved, held out of the catalog (held=true) or only reported (held=false), until mcplex trust.",
      labelNames: ["server", "held"],
      registers,
    });
    this.#sessions = new Gauge({
      name: "mcplex_active_sessions",
      help: "Client sessions open now, by transport.",
      labelNames: ["transport"],
      registers,
    });
    this.#sessionLimits = new Counter({
      name: "mcplex_sessions_limited_total",
      help: "Sessions a cap closed (evicted, the longest idle) or turned away (refused), by transport.",
      labelNames: ["transport", "outcome"],
      registers,
    });
    this.#listenStreams = new Gauge({
      name: "mcplex_listen_streams",
      help: "Open subscriptions/listen streams (2026 clients).",
      registers,
    });
    this.#cacheLookups = new Counter({
      name: "mcplex_cache_lookups_total",
      help: "Calls of cacheable tools, answered from the result cache (hit) or by the server (miss).",
      labelNames: ["server", "outcome"],
      registers,
    });
    this.#cacheEntries = new Gauge({
      name: "mcplex_cache_entries",
      help: "Tool results held in the result cache, by server.",
      labelNames: ["server"],
      registers,
    });
    this.#codeScripts = new Gauge({
      name: "mcplex_code_scripts",
      help: "run_code scripts of the process running in a sandbox worker, and waiting for one.",
      labelNames: ["state"],
      registers,
    });
    this.#codeBusy = new Counter({
      name: "mcplex_code_busy_total",
      help: "run_code scripts refused as busy (CODE_BUSY): their client's queue was full, or they waited past its time bound.",
      labelNames: ["reason"],
      registers,
    });
    this.#codeQueue = new Histogram({
      name: "mcplex_code_queue_seconds",
      help: "Time a run_code script waited for a sandbox worker, until it started or was refused as busy.",
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#budget = new Gauge({
      name: "mcplex_memory_budget_bytes",
      help: "The memory budget of the HTTP fronts (limit) and the bytes of messages waiting in it (used).",
      labelNames: ["state"],
      registers,
    });
    this.#connections = new Gauge({
      name: "mcplex_http_connections",
      help: "Open HTTP connections within the connection caps (the room kept for probes apart).",
      registers,
    });
    this.#limitRefusals = new Counter({
      name: "mcplex_limit_refusals_total",
      help: "Requests refused for the memory budget (memory-budget), connections past the connection caps (connections).",
      labelNames: ["limit"],
      registers,
    });
  }

  /**
   * Follows the code-mode sandbox's queue: `mcplex_code_scripts{state=running|waiting}`,
   * `mcplex_code_queue_seconds` (each script's wait for a worker) and
   * `mcplex_code_busy_total{reason=queue_full|queue_timeout}`. Returns the function that stops
   * following.
   */
  trackSandbox(queue: Pick<SandboxQueue, "stats" | "watch">): () => void {
    const sync = () => {
      const { running, waiting } = queue.stats();
      this.#codeScripts.set({ state: "running" }, running);
      this.#codeScripts.set({ state: "waiting" }, waiting);
    };
    this.#syncs.add(sync);
    this.#codeBusy.inc({ reason: "queue_full" }, 0);
    this.#codeBusy.inc({ reason: "queue_timeout" }, 0);
    const off = queue.watch((event) => {
      this.#codeQueue.observe(event.waitedMs / 1000);
      if (event.type === "refused")
        this.#codeBusy.inc({ reason: event.reason === "queue-full" ? "queue_full" : "queue_timeout" });
    });
    return () => {
      off();
      this.#syncs.delete(sync);
    };
  }

  /**
   * Follows a result cache: `mcplex_cache_lookups_total{server, outcome=hit|miss}` and
   * `mcplex_cache_entries{server}`. Returns the function that stops following.
   */
  trackCache(cache: ResultCache): () => void {
    const sync = () => {
      for (const [server, counts] of cache.counts()) this.#cacheEntries.set({ server }, counts.entries);
    };
    this.#syncs.add(sync);
    const off = cache.watch(({ server, hit }) =>
      this.#cacheLookups.inc({ server, outcome: hit ? "hit" : "miss" }),
    );
    return () => {
      off();
      this.#syncs.delete(sync);
    };
  }

  /** Records one finished request. */
  observeRequest(observation: RequestObservation): void {
    const series = this.#seriesFor(observation.method, observation.server ?? "", observation.tool ?? "");
    series[observation.outcome]++;
    series.duration.observe(observation.seconds);
  }

  /** Adds the requests counted since the last read to `mcplex_requests_total`. */
  #addRequests(): void {
    for (const byServer of this.#series.values())
      for (const byTool of byServer.values())
        for (const series of byTool.values()) {
          for (const outcome of OUTCOMES) {
            const count = series[outcome];
            if (count === 0) continue;
            series[outcome] = 0;
            this.#requests.inc({ ...series.labels, outcome }, count);
          }
        }
  }

  #seriesFor(rawMethod: string, server: string, rawTool: string): Series {
    const method = this.#methods.has(rawMethod) ? rawMethod : "other";
    let byServer = this.#series.get(method);
    if (byServer === undefined) {
      byServer = new Map();
      this.#series.set(method, byServer);
    }
    let byTool = byServer.get(server);
    if (byTool === undefined) {
      byTool = new Map();
      byServer.set(server, byTool);
    }
    const cached = byTool.get(rawTool);
    if (cached !== undefined) return cached;
    // Past the bound, new tool names share one series rather than growing without end.
    const tool = this.#seriesCount >= this.#maxSeries && rawTool !== "" ? "other" : rawTool;
    const existing = byTool.get(tool);
    if (existing !== undefined) return existing;
    const labels = { method, server, tool };
    const series: Series = {
      labels,
      ok: 0,
      error: 0,
      tool_error: 0,
      duration: this.#duration.series(labels),
    };
    byTool.set(tool, series);
    this.#seriesCount++;
    return series;
  }

  /**
   * Follows a hub: `mcplex_upstream_state` from every `server-state` event, and from
   * `hub.servers()` at once, on `catalog-changed` and before each render (so servers
   * added or removed at run time are picked up); `mcplex_upstream_reconnects_total` on
   * each reconnecting → ready transition; `mcplex_pin_changes` of pinned servers. Returns the function that stops following.
   */
  trackHub(hub: Hub): () => void {
    let known = new Set<string>();
    const sync = () => {
      const now = new Set<string>();
      for (const status of hub.servers()) {
        now.add(status.name);
        this.#setState(status.name, status.state);
        if (!known.has(status.name)) this.#reconnects.inc({ server: status.name }, 0);
        const pin = hub.serverConfig(status.name)?.pin;
        if (pin !== undefined && pin !== "off") {
          const held = status.held ?? 0;
          this.#pinChanges.set({ server: status.name, held: "true" }, held);
          this.#pinChanges.set({ server: status.name, held: "false" }, (status.pinChanges ?? 0) - held);
        }
      }
      for (const server of known) {
        if (now.has(server)) continue;
        for (const state of STATES) this.#state.remove({ server, state });
        this.#reconnects.remove({ server });
        for (const held of ["true", "false"]) this.#pinChanges.remove({ server, held });
      }
      known = now;
    };
    sync();
    this.#syncs.add(sync);
    const off = hub.on((event) => {
      if (event.type === "catalog-changed" || event.type === "pin-changes") sync();
      // Rule and guardrail names come from the config: a bounded label.
      if (event.type === "decision")
        this.#decisions.inc({ by: event.by, name: event.name, effect: event.effect });
      if (event.type !== "server-state") return;
      this.#setState(event.server, event.state);
      if (event.state === "ready" && event.previous === "reconnecting") {
        this.#reconnects.inc({ server: event.server });
      }
    });
    return () => {
      off();
      this.#syncs.delete(sync);
    };
  }

  #setState(server: string, current: ServerStatus["state"]): void {
    for (const state of STATES) this.#state.set({ server, state }, state === current ? 1 : 0);
  }

  /** Sets how many client sessions are open on a transport (`stdio`, `http`, `websocket`). */
  setSessions(transport: string, count: number): void {
    this.#sessions.set({ transport }, count);
  }

  /** Counts a session a cap evicted, or a new one it refused. */
  countSessionLimit(transport: string, outcome: "evicted" | "refused"): void {
    this.#sessionLimits.inc({ transport, outcome });
  }

  /**
   * Brings the memory budget and connection series up to date from their sources, whose
   * `refused` are running totals.
   */
  setLimits(limits: {
    budget: { used: number; limit: number; refused: number };
    connections: { open: number; refused: number };
  }): void {
    this.#budget.set({ state: "used" }, limits.budget.used);
    this.#budget.set({ state: "limit" }, limits.budget.limit);
    this.#connections.set(limits.connections.open);
    this.#countRefusals("memory-budget", limits.budget.refused);
    this.#countRefusals("connections", limits.connections.refused);
  }

  #countRefusals(limit: string, total: number): void {
    const seen = this.#refusalsSeen.get(limit) ?? 0;
    if (total > seen) this.#limitRefusals.inc({ limit }, total - seen);
    else this.#limitRefusals.inc({ limit }, 0);
    this.#refusalsSeen.set(limit, total);
  }

  /** Sets how many `subscriptions/listen` streams are open. */
  setListenStreams(count: number): void {
    this.#listenStreams.set(count);
  }

  /** The metrics in Prometheus text format, for `GET /metrics`. */
  async render(): Promise<{ contentType: string; body: string }> {
    for (const sync of this.#syncs) sync();
    const registry = this.#processMetrics
      ? Registry.merge([this.registry, sharedProcessRegistry()])
      : this.registry;
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}
