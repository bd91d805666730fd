import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { CodeModeError } from "../../src/code-mode/index.js";
import {
  type QueueBounds,
  type QueueEvent,
  SandboxQueue,
  type WorkerSlot,
} from "../../src/code-mode/sandbox-queue.js";

// The queue's rules alone, on a queue of its own (two shared workers): which script gets a
// worker, when, and which is refused. sandbox-pool.test.ts runs real scripts through the
// process's queue.

const bounds: QueueBounds = { queueMs: 60_000, maxQueued: 16, wallMs: 30_000 };

/** A full collection of the heap, from a task of its own (the frame that queued holds nothing). */
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
const collectSoon = () => new Promise<void>((resolve) => setImmediate(() => resolve(collectGarbage())));

/** Takes a slot for `client`, recording its name in `started` when granted. */
function take(
  queue: SandboxQueue,
  client: string,
  name: string,
  started: string[],
  options: Partial<QueueBounds> = {},
): Promise<WorkerSlot> {
  return queue.acquire(client, { ...bounds, ...options }).then((slot) => {
    started.push(name);
    return slot;
  });
}

describe("the sandbox queue", () => {
  it("refuses a script waiting with its caller's signal at queueMs, after a full collection of the heap", async () => {
    const queue = new SandboxQueue({ workers: 1, ceiling: 1 });
    const held = await queue.acquire("a", bounds);
    const caller = new AbortController();
    const waiting = queue.acquire("b", { ...bounds, queueMs: 100 }, caller.signal);
    await collectSoon();
    const error = await waiting.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CodeModeError);
    expect(error).toMatchObject({ code: "CODE_BUSY" });
    expect(caller.signal.aborted).toBe(false);
    held.release();
  }, 10_000);

  it("starts a client's only script beyond the busy shared workers, up to the ceiling", async () => {
    const queue = new SandboxQueue({ workers: 2, ceiling: 4 });
    const started: string[] = [];
    const a1 = await take(queue, "a", "a1", started);
    await take(queue, "a", "a2", started);
    const a3 = take(queue, "a", "a3", started);
    // A holds both shared workers and waits for more; B and C each get one of their own.
    await take(queue, "b", "b1", started);
    await take(queue, "c", "c1", started);
    const d1 = take(queue, "d", "d1", started);
    expect(queue.stats()).toMatchObject({ running: 4, waiting: 2 });
    expect(started).toEqual(["a1", "a2", "b1", "c1"]);
    // D has nothing running: it goes before A's third script, which needs a shared worker.
    a1.release();
    await d1;
    expect(started.at(-1)).toBe("d1");
    expect(queue.stats()).toMatchObject({ running: 4, waiting: 1 });
    void a3;
  });

  it("hands the workers out in turn between clients' queues, not first come first served", async () => {
    const queue = new SandboxQueue({ workers: 2, ceiling: 2 });
    const started: string[] = [];
    const slots = new Map<string, WorkerSlot>();
    const track = (client: string, name: string) =>
      take(queue, client, name, started).then((slot) => slots.set(name, slot));
    await track("c", "c1");
    await track("c", "c2");
    const waits = [track("a", "a1"), track("a", "a2"), track("a", "a3"), track("b", "b1"), track("b", "b2")];
    // Each script ends as soon as it has started, in the order they started.
    for (let next = 0; next < started.length; next++) {
      slots.get(started[next]!)!.release();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await Promise.all(waits);
    expect(started).toEqual(["c1", "c2", "a1", "b1", "a2", "b2", "a3"]);
  });

  it("refuses at once a script past the client's maxQueued, with CODE_BUSY saying when to retry", async () => {
    const queue = new SandboxQueue({ workers: 2, ceiling: 2 });
    const events: QueueEvent[] = [];
    queue.watch((event) => events.push(event));
    const started: string[] = [];
    await take(queue, "a", "a1", started);
    await take(queue, "a", "a2", started);
    void take(queue, "a", "a3", started, { maxQueued: 1 });
    const error = await queue.acquire("a", { ...bounds, maxQueued: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CodeModeError);
    expect(error).toMatchObject({ code: "CODE_BUSY", retryable: true, path: "limits.maxQueued" });
    expect((error as CodeModeError).message).toMatch(
      /^The code sandbox is busy: 1 script of this client already waits .*; retry after \d+ s\.$/,
    );
    // A's scripts end by their time limit, 30 s from now at the latest.
    expect((error as CodeModeError).retryAt).toBeGreaterThan(Date.now() + 25_000);
    expect(events.at(-1)).toEqual({ type: "refused", waitedMs: 0, reason: "queue-full" });
    expect(queue.stats()).toEqual({ running: 2, waiting: 1, refused: 1 });
  });

  it("refuses a script that waited past queueMs, and counts its wait", async () => {
    const queue = new SandboxQueue({ workers: 2, ceiling: 2 });
    const events: QueueEvent[] = [];
    queue.watch((event) => events.push(event));
    const started: string[] = [];
    await take(queue, "a", "a1", started);
    await take(queue, "b", "b1", started);
    const error = await queue.acquire("a", { ...bounds, queueMs: 50 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "CODE_BUSY", path: "limits.queueMs" });
    expect((error as CodeModeError).message).toMatch(
      /^The code sandbox is busy: this script waited 50 ms for a worker \(limits\.queueMs\) while this client's other scripts held them; retry after \d+ s\.$/,
    );
    const refused = events.at(-1);
    expect(refused).toMatchObject({ type: "refused", reason: "queue-timeout" });
    expect((refused as { waitedMs: number }).waitedMs).toBeGreaterThanOrEqual(49);
    expect(queue.stats()).toEqual({ running: 2, waiting: 0, refused: 1 });
  });

  it("takes a cancelled script out of its client's queue", async () => {
    const queue = new SandboxQueue({ workers: 2, ceiling: 2 });
    const started: string[] = [];
    const a1 = await take(queue, "a", "a1", started);
    await take(queue, "a", "a2", started);
    const cancel = new AbortController();
    const cancelled = queue.acquire("a", bounds, cancel.signal).catch((e: unknown) => e);
    const a4 = take(queue, "a", "a4", started);
    cancel.abort();
    expect(await cancelled).toMatchObject({ code: "REQUEST_ABORTED" });
    a1.release();
    await a4;
    expect(started).toEqual(["a1", "a2", "a4"]);
    expect(queue.stats()).toMatchObject({ running: 2, waiting: 0, refused: 0 });
  });
});
