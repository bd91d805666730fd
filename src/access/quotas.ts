import { type ToolSelectors, toolSelector } from "../catalog/tool-selector.js";
import type { CatalogTool } from "../catalog/types.js";
import type { QuotaConfig } from "../config/types.js";
import { McplexError } from "../errors.js";

/** What a store answers when asked to count a call in a window. */
export type WindowTake = { ok: true } | { ok: false; retryAt: number };

/**
 * Where quotas are counted: in this process ({@link MemoryQuotaStore}), or in Redis for every
 * replica of a cluster (`src/cluster/redis-quota-store.ts`).
 */
export interface QuotaStore {
  /**
   * Counts one call in the current window of `key` (windows start at multiples of `windowMs`
   * since the epoch), unless `limit` are counted there already; then says when the window ends.
   */
  take(key: string, limit: number, windowMs: number): WindowTake | Promise<WindowTake>;
  /** Counts call `id` as running under `key`, unless `limit` are: `false` then. */
  enter(key: string, id: string, limit: number): boolean | Promise<boolean>;
  /** Ends what {@link enter} counted. */
  leave(key: string, id: string): void;
}

/** Windows and running calls in this process's memory, bounded (stale windows swept). */
export class MemoryQuotaStore implements QuotaStore {
  readonly #windows = new Map<string, { index: number; count: number }>();
  readonly #running = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  take(key: string, limit: number, windowMs: number): WindowTake {
    const now = this.#now();
    const index = Math.floor(now / windowMs);
    let window = this.#windows.get(key);
    if (window === undefined || window.index !== index) {
      // A key per caller and quota: those of windows gone are dropped now and then.
      if (window === undefined && this.#windows.size >= 4096) this.#sweep(now, windowMs);
      window = { index, count: 0 };
      this.#windows.set(key, window);
    }
    if (window.count >= limit) return { ok: false, retryAt: (index + 1) * windowMs };
    window.count++;
    return { ok: true };
  }

  enter(key: string, _id: string, limit: number): boolean {
    const running = this.#running.get(key) ?? 0;
    if (running >= limit) return false;
    this.#running.set(key, running + 1);
    return true;
  }

  leave(key: string, _id: string): void {
    const running = (this.#running.get(key) ?? 1) - 1;
    if (running <= 0) this.#running.delete(key);
    else this.#running.set(key, running);
  }

  #sweep(now: number, windowMs: number): void {
    // Windows of other lengths are kept unless they are older than this one's (a bound, not exact).
    const index = Math.floor(now / windowMs);
    for (const [key, window] of this.#windows) if (window.index < index - 1) this.#windows.delete(key);
  }
}

/** A call refused by a quota: `QUOTA_EXCEEDED`, naming the quota, with when to retry. */
export class QuotaExceededError extends McplexError {
  /** The quota's `name`. */
  readonly quota: string;

  constructor(quota: string, message: string, retryAt: number) {
    super("QUOTA_EXCEEDED", message, { retryAt, retryable: true });
    this.quota = quota;
  }
}

/** One quota compiled: its selectors, and the keys it counts under. */
interface Quota {
  config: QuotaConfig;
  picks: (tool: CatalogTool, profile: string | undefined) => boolean;
}

/** What an admitted call holds until it ends. */
export interface QuotaLease {
  /** Ends the call's place in the `concurrent` counts it took. */
  release(): void;
}

const NO_LEASE: QuotaLease = { release: () => {} };
let ids = 0;

/**
 * `quotas:` at work: which quotas a tool call falls under, and whether each lets it in. Running
 * places (`concurrent`) are taken first, as they can be given back when a window refuses; a call
 * refused by one quota's window after another's counted it stays counted there (one call of slack).
 */
export class Quotas {
  readonly #quotas: Quota[];
  readonly #store: QuotaStore;
  readonly #now: () => number;

  constructor(configs: readonly QuotaConfig[], store: QuotaStore, now: () => number = Date.now) {
    this.#quotas = configs.map((config) => ({ config, picks: toolSelector(config as ToolSelectors) }));
    this.#store = store;
    this.#now = now;
  }

  /** The quotas a call of `tool` by a caller of `profile` falls under, in config order. */
  picking(tool: CatalogTool, profile: string | undefined): QuotaConfig[] {
    const out: QuotaConfig[] = [];
    for (const quota of this.#quotas) if (quota.picks(tool, profile)) out.push(quota.config);
    return out;
  }

  /**
   * Lets a call in under `quotas` (from {@link picking}) for the caller `principal` (its
   * identity's key), or refuses it with `QUOTA_EXCEEDED` saying which quota and when to retry.
   */
  async admit(quotas: readonly QuotaConfig[], principal: string): Promise<QuotaLease> {
    const entered: Array<{ key: string; id: string }> = [];
    const release = () => {
      for (const { key, id } of entered.splice(0)) this.#store.leave(key, id);
    };
    try {
      for (const quota of quotas) {
        if (quota.concurrent === undefined) continue;
        const key = keyOf(quota, principal, "running");
        const id = `${process.pid}.${++ids}`;
        if (!(await this.#store.enter(key, id, quota.concurrent)))
          throw this.#refusal(quota, "running", this.#now() + 1000);
        entered.push({ key, id });
      }
      for (const quota of quotas) {
        if (quota.calls === undefined || quota.window === undefined) continue;
        const taken = await this.#store.take(keyOf(quota, principal, "window"), quota.calls, quota.window);
        if (!taken.ok) throw this.#refusal(quota, "window", taken.retryAt);
      }
    } catch (error) {
      release();
      throw error;
    }
    return entered.length === 0 ? NO_LEASE : { release };
  }

  #refusal(quota: QuotaConfig, what: "running" | "window", retryAt: number): QuotaExceededError {
    const who = quota.per === "all" ? "for everyone" : "per caller";
    const limit =
      what === "running"
        ? `${quota.concurrent} call${quota.concurrent === 1 ? "" : "s"} at once ${who}`
        : `${quota.calls} call${quota.calls === 1 ? "" : "s"} per ${durationText(quota.window!)} ${who}`;
    const wait = Math.max(1, Math.ceil((retryAt - this.#now()) / 1000));
    return new QuotaExceededError(
      quota.name,
      `quota "${quota.name}" allows ${limit}; try again in ${wait} s` +
        (what === "running" ? " (when one of them ends)" : ` (at ${new Date(retryAt).toISOString()})`),
      retryAt,
    );
  }
}

/** The store key of a quota's count: the quota, the caller (unless shared by all), the count kind. */
function keyOf(quota: QuotaConfig, principal: string, kind: "running" | "window"): string {
  const limits = kind === "running" ? `c${quota.concurrent}` : `w${quota.window}`;
  // The limits are in the key: a reload that changes them starts new counts, never misreads old ones.
  return `${kind}\0${quota.name}\0${limits}\0${quota.per === "all" ? "" : principal}`;
}

/** `1h`, `30m`, `90s`: a window as the config would write it. */
function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
