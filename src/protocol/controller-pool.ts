import { getEventListeners } from "node:events";

const SLOTS = Symbol("mcplex.abortSlots");

type Slotted = AbortSignal & { [SLOTS]?: Array<() => void> };

/**
 * An AbortController whose signal takes listeners through {@link onAbort} into a plain
 * array, behind one permanent `abort` listener. The gateway adds and removes a listener for
 * every call it forwards: 420 ns per call through EventTarget, 30-50 ns here (about 2% of the
 * gateway's work per call).
 */
export function slottedController(): AbortController {
  const controller = new AbortController();
  const slots: Array<() => void> = [];
  (controller.signal as Slotted)[SLOTS] = slots;
  controller.signal.addEventListener(
    "abort",
    () => {
      for (const listener of slots.splice(0)) listener();
    },
    { once: true },
  );
  return controller;
}

/** Calls `listener` once when `signal` aborts; {@link offAbort} with the same function stops that. */
export function onAbort(signal: AbortSignal, listener: () => void): void {
  const slots = (signal as Slotted)[SLOTS];
  if (slots === undefined) signal.addEventListener("abort", listener, { once: true });
  else if (!signal.aborted) slots.push(listener);
}

/** Removes a listener added by {@link onAbort}. */
export function offAbort(signal: AbortSignal, listener: () => void): void {
  const slots = (signal as Slotted)[SLOTS];
  if (slots === undefined) {
    signal.removeEventListener("abort", listener);
    return;
  }
  // Usually the last one added: pop, which leaves no garbage (splice returns an array).
  if (slots[slots.length - 1] === listener) slots.pop();
  else {
    const at = slots.indexOf(listener);
    if (at !== -1) slots.splice(at, 1);
  }
}

/** Listeners still waiting on `signal`, whichever way they were added (for checks in tests). */
export function abortListenerCount(signal: AbortSignal): number {
  const slots = (signal as Slotted)[SLOTS];
  // A slotted signal carries its own dispatching listener until it aborts.
  return (
    (slots?.length ?? 0) +
    getEventListeners(signal, "abort").length -
    (slots !== undefined && !signal.aborted ? 1 : 0)
  );
}

const CHECK_SIGNALS = process.env.MCPLEX_CHECK_SIGNALS === "1";

/**
 * AbortControllers kept for reuse: a new one (an EventTarget) costs more than the rest of
 * a forwarded call's bookkeeping together (a third of the gateway's work per call under
 * callgrind, 4.5% of the HTTP front's profile). A controller goes back only when it was never
 * aborted, and reuse rests on one rule: whatever listens to a request's signal stops
 * listening when the request ends (RpcConnection, parking, local servers all do), or it
 * would see a later request's abort. With MCPLEX_CHECK_SIGNALS=1 (set by the test suite) a
 * leftover listener is a crash, so every test that goes through a gateway checks the rule.
 */
export class ControllerPool {
  readonly #free: AbortController[] = [];
  readonly #max: number;

  constructor(max = 64) {
    this.#max = max;
  }

  /** A controller that is not aborted and has no listeners. */
  take(): AbortController {
    return this.#free.pop() ?? slottedController();
  }

  /** Gives back a controller whose request has ended (an aborted one is dropped). */
  give(controller: AbortController): void {
    if (controller.signal.aborted || this.#free.length >= this.#max) return;
    if (CHECK_SIGNALS && abortListenerCount(controller.signal) > 0) {
      // Thrown outside any promise chain, so that no caller's catch can swallow it: the process ends.
      process.nextTick(() => {
        throw new Error("mcplex: a listener was left on a finished request's signal");
      });
      return;
    }
    this.#free.push(controller);
  }

  /**
   * Gives back a controller whose signal went to code that may not follow the rule (an
   * application's tool handler): kept only when nothing listens to it any more, else dropped.
   */
  giveIfUnheard(controller: AbortController): void {
    if (controller.signal.aborted || this.#free.length >= this.#max) return;
    if (abortListenerCount(controller.signal) > 0) return;
    this.#free.push(controller);
  }
}
