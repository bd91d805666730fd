/** Messages up to this size are small: they may use the reserve kept for them past the budget. */
export const SMALL_MESSAGE_BYTES = 64 * 1024;

/** Default of {@link ByteBudget}'s limit (`--memory-budget`, `serve.memoryBudget`). */
export const DEFAULT_MEMORY_BUDGET = 32 * 1024 * 1024;

/** How long a client refused for the budget is asked to wait (`Retry-After`, seconds). */
export const BUDGET_RETRY_AFTER_SECONDS = 1;

/** What one message (and its answer) holds of a {@link MemoryBudget}, until released. */
export interface BudgetLease {
  /** Bytes held. */
  readonly bytes: number;
  /** Takes `bytes` more when they fit, as {@link MemoryBudget.reserve} decides; `false`, taking nothing, when not. */
  grow(bytes: number): boolean;
  /** Takes `bytes` more whatever the budget: what already exists (an answer) must be held. */
  charge(bytes: number): void;
  /** Gives everything back; later calls of any method do nothing. */
  release(): void;
}

/**
 * One accountant for what waits in the gateway: request bodies being read and held, and their
 * answers until written out, across every front and client. The fronts reserve before they
 * read, so that past the budget a large request is refused before its body costs anything.
 *
 * @example
 * const lease = budget.reserve(contentLength);
 * if (lease === undefined) return refuseWith503();
 * res.once("close", () => lease.release());
 */
export interface MemoryBudget {
  /** The budget in bytes. */
  readonly limit: number;
  /** Bytes held now. */
  readonly used: number;
  /** Reservations and growths refused so far (for `/metrics`). */
  readonly refused: number;
  /**
   * Takes `bytes` for one message, or `undefined` when they do not fit: a small message
   * (at most {@link SMALL_MESSAGE_BYTES}) fits while the budget plus its reserve for small
   * ones has room, a large one while the budget has, and a message alone always fits.
   */
  reserve(bytes: number): BudgetLease | undefined;
}

/**
 * The in-process {@link MemoryBudget}: `limit` bytes for any message, and a quarter more that
 * only small messages may use, so that calls and control messages still pass while large ones
 * hold the budget.
 */
export class ByteBudget implements MemoryBudget {
  readonly limit: number;
  readonly #reserve: number;
  #used = 0;
  #refused = 0;

  constructor(limit = DEFAULT_MEMORY_BUDGET) {
    this.limit = limit;
    this.#reserve = Math.max(Math.floor(limit / 4), 4 * SMALL_MESSAGE_BYTES);
  }

  get used(): number {
    return this.#used;
  }

  get refused(): number {
    return this.#refused;
  }

  reserve(bytes: number): BudgetLease | undefined {
    if (!this.#fits(0, bytes)) {
      this.#refused++;
      return undefined;
    }
    this.#used += bytes;
    return this.#lease(bytes);
  }

  /** Whether a message holding `held` may take `more`. */
  #fits(held: number, more: number): boolean {
    const total = held + more;
    if (this.#used === held) return true;
    const room = total <= SMALL_MESSAGE_BYTES ? this.limit + this.#reserve : this.limit;
    return this.#used + more <= room;
  }

  #lease(initial: number): BudgetLease {
    return new ByteLease(this, initial);
  }

  /** @internal A lease's growth: whether it fits (counted as refused when not). */
  leaseFits(held: number, bytes: number): boolean {
    if (this.#fits(held, bytes)) return true;
    this.#refused++;
    return false;
  }

  /** @internal Bytes a lease takes or gives back. */
  leaseTake(bytes: number): void {
    this.#used += bytes;
  }
}

/**
 * A {@link ByteBudget}'s lease: one object of one class per message (not an object of closures),
 * as every request takes one. Its methods are not bound: pass `() => lease.release()`.
 */
class ByteLease implements BudgetLease {
  readonly #budget: ByteBudget;
  #held: number;
  #released = false;

  constructor(budget: ByteBudget, held: number) {
    this.#budget = budget;
    this.#held = held;
  }

  get bytes(): number {
    return this.#held;
  }

  grow(bytes: number): boolean {
    if (this.#released) return true;
    if (!this.#budget.leaseFits(this.#held, bytes)) return false;
    this.#held += bytes;
    this.#budget.leaseTake(bytes);
    return true;
  }

  charge(bytes: number): void {
    if (this.#released) return;
    this.#held += bytes;
    this.#budget.leaseTake(bytes);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#budget.leaseTake(-this.#held);
    this.#held = 0;
  }
}

/** The message of a request refused for the budget (HTTP 503, or an error answer on /ws). */
export function budgetRefusal(budget: MemoryBudget): string {
  return (
    `Service Unavailable: the gateway's memory budget (${mib(budget.limit)}) is held by requests ` +
    `in flight; retry in ${BUDGET_RETRY_AFTER_SECONDS} s, or send smaller requests (up to ` +
    `${SMALL_MESSAGE_BYTES / 1024} KiB still pass)`
  );
}

function mib(bytes: number): string {
  return `${Number((bytes / 2 ** 20).toFixed(1))} MiB`;
}
