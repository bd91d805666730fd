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
