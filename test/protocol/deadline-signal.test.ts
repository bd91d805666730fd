import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { deadlineSignal } from "../../src/protocol/deadline-signal.js";

/** A full collection of the heap, as a loaded gateway has every few seconds. */
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/** Collects the heap from a task of its own: the frame that made the signals holds none of them. */
const collectSoon = () => new Promise<void>((resolve) => setImmediate(() => resolve(collectGarbage())));

const MS = 100;

/** Resolves when `signal` aborts. */
const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));

/**
 * Where the work's caller keeps what it waits on: the source controller and the combined signal,
 * not the timeout signal (nothing does in `AbortSignal.any([signal, AbortSignal.timeout(ms)])`).
 */
const held = new Set<unknown>();

describe("deadlineSignal", () => {
  it("aborts at its deadline with a TimeoutError after a full collection of the heap", async () => {
    const deadlines = Array.from({ length: 7 }, () => {
      const source = new AbortController();
      const deadline = deadlineSignal(MS, source.signal);
      held.add(source);
      return deadline;
    });
    const all = Promise.all(deadlines.map((deadline) => aborted(deadline.signal)));
    await collectSoon();
    await all;
    for (const deadline of deadlines) {
      expect(deadline.expired).toBe(true);
      expect(deadline.signal.reason).toBeInstanceOf(DOMException);
      expect((deadline.signal.reason as DOMException).name).toBe("TimeoutError");
    }
  });

  it("aborts with the reason of the signal that aborts first, and is then not expired", () => {
    const source = new AbortController();
    const deadline = deadlineSignal(60_000, undefined, source.signal);
    source.abort(new Error("the client went"));
    expect(deadline.signal.reason).toEqual(new Error("the client went"));
    expect(deadline.expired).toBe(false);
    deadline.clear();
  });

  it("is aborted at once when a signal already is", () => {
    const deadline = deadlineSignal(60_000, AbortSignal.abort("gone"));
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.signal.reason).toBe("gone");
  });

  it("never aborts once cleared", async () => {
    const cleared = deadlineSignal(MS);
    cleared.clear();
    cleared.clear();
    // Timers of one length fire in the order they were set: the later one aborting means the
    // cleared one's time has come and gone.
    const later = deadlineSignal(MS);
    await aborted(later.signal);
    expect(cleared.signal.aborted).toBe(false);
  });

  // The bug it replaces (nodejs/node#57736): should this fail on a newer Node, Node fixed it.
  it("the pattern it replaces never aborts after a full collection of the heap (Node 20)", async () => {
    const source = new AbortController();
    const old = AbortSignal.any([source.signal, AbortSignal.timeout(MS)]);
    old.addEventListener("abort", () => {});
    held.add(source);
    held.add(old);
    const deadline = deadlineSignal(MS, source.signal);
    await collectSoon();
    // Set after the old pattern's timeout, with the same length: it fires after it.
    await aborted(deadline.signal);
    expect(old.aborted).toBe(false);
  });

  it("is what src/ uses: no file combines AbortSignal.timeout with AbortSignal.any", () => {
    const files = readdirSync("src", { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts"))
      .map((file) => join("src", file));
    const offenders = files.filter((file) => {
      const code = readFileSync(file, "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/\/\/.*$/gm, "");
      return code.includes("AbortSignal.any(") && code.includes("AbortSignal.timeout(");
    });
    expect(files.length).toBeGreaterThan(100);
    expect(offenders).toEqual([]);
  });
});
