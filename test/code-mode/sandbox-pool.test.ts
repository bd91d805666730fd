import type { CallToolResult } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { type CallTool, CodeModeError, runCode } from "../../src/code-mode/index.js";
import { MAX_WORKERS, sandboxWorkerStats } from "../../src/code-mode/sandbox-pool.js";

const tools = [{ server: "s", name: "t", exposed: "s__t" }];
const answer = (i: unknown): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(i) }] });

/**
 * A tool whose calls wait until `release()`: `busy` settles when MAX_WORKERS calls wait (every
 * shared worker is held); after `release()`, calls answer at once.
 */
function heldTool(): { callTool: CallTool; busy: Promise<void>; release(): void } {
  const held: Array<() => void> = [];
  let free = false;
  let allBusy!: () => void;
  const busy = new Promise<void>((resolve) => {
    allBusy = resolve;
  });
  const callTool: CallTool = (_name, args) =>
    new Promise((resolve) => {
      if (free) return resolve(answer(args.i));
      held.push(() => resolve(answer(args.i)));
      if (held.length === MAX_WORKERS) allBusy();
    });
  return {
    callTool,
    busy,
    release() {
      free = true;
      for (const answerNow of held) answerNow();
    },
  };
}

describe("the sandbox workers", () => {
  it("run at most MAX_WORKERS scripts at once; the others wait their turn, and a wait can be cancelled", async () => {
    const { callTool, busy, release } = heldTool();
    const runs = Array.from({ length: MAX_WORKERS + 2 }, (_, i) =>
      runCode({ code: `await tools.s.t({ i: ${i} })`, tools, callTool }),
    );
    const cancel = new AbortController();
    const cancelled = runCode({ code: "1", tools, callTool, signal: cancel.signal }).catch((e: unknown) => e);
    await busy;
    expect(sandboxWorkerStats()).toMatchObject({ running: MAX_WORKERS, waiting: 3 });
    cancel.abort();
    const error = await cancelled;
    expect(error).toBeInstanceOf(CodeModeError);
    expect((error as CodeModeError).code).toBe("REQUEST_ABORTED");
    expect(sandboxWorkerStats().waiting).toBe(2);
    release();
    const values = (await Promise.all(runs)).map((r) => r.value);
    expect(values).toEqual(Array.from({ length: MAX_WORKERS + 2 }, (_, i) => i));
    expect(sandboxWorkerStats()).toMatchObject({ running: 0, waiting: 0 });
  });

  it("runs another client's script at once while one client's scripts hold every shared worker", async () => {
    const { callTool, busy, release } = heldTool();
    const runs = Array.from({ length: MAX_WORKERS + 1 }, (_, i) =>
      runCode({ code: `await tools.s.t({ i: ${i} })`, tools, callTool, client: "a" }),
    );
    await busy;
    expect(sandboxWorkerStats()).toMatchObject({ running: MAX_WORKERS, waiting: 1 });
    // B's script needs no worker of A's: it runs while A's still hold theirs.
    const other = await runCode({ code: "40 + 2", tools, callTool, client: "b" });
    expect(other.value).toBe(42);
    expect(sandboxWorkerStats()).toMatchObject({ running: MAX_WORKERS, waiting: 1 });
    release();
    expect((await Promise.all(runs)).map((r) => r.value)).toEqual(
      Array.from({ length: MAX_WORKERS + 1 }, (_, i) => i),
    );
  });
});
