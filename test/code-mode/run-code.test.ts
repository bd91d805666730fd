import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodeModeError, runCode } from "../../src/code-mode/index.js";
import { McplexError } from "../../src/errors.js";
import { type HubTools, startHubTools } from "./hub-tools.js";

let hub: HubTools;
beforeAll(async () => {
  hub = await startHubTools();
});
afterAll(() => hub?.close());

const run = (code: string, extra: Partial<Parameters<typeof runCode>[0]> = {}) =>
  runCode({ code, tools: hub.tools, callTool: hub.callTool, ...extra });

/** The first call the hub receives; fails at once if the run ends before making one. */
function firstCall(running: Promise<unknown>, called: Promise<{ name: string; signal: AbortSignal }>) {
  return Promise.race([
    called,
    running.then(
      () => Promise.reject(new Error("the run ended before calling a tool")),
      (error: unknown) => Promise.reject(error),
    ),
  ]);
}

async function failure(promise: Promise<unknown>): Promise<CodeModeError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CodeModeError);
  return error as CodeModeError;
}

describe("runCode with server-everything's tools", () => {
  it("calls a tool as tools.<server>.<name> and returns the last expression", async () => {
    const result = await run(
      `const r = await tools.everything.echo({ message: "hi" });\nconsole.log("got", r);\nr`,
    );
    expect(result.value).toBe("Echo: hi");
    expect(result.logs).toEqual(["got Echo: hi"]);
    expect(result.output).toBe('got Echo: hi\n"Echo: hi"');
    expect(result.toolCalls).toBe(1);
    expect(hub.calls.at(-1)).toMatchObject({ name: "everything__echo", args: { message: "hi" } });
  });

  it("returns structuredContent when the tool gives it, and content blocks when they are not text", async () => {
    const result = await run(`
      const weather = await tools.everything.get_structured_content({ location: "Chicago" });
      const image = await tools.everything.get_tiny_image();
      return { weather, kinds: image.map((block) => block.type) };`);
    const value = result.value as { weather: Record<string, unknown>; kinds: string[] };
    expect(Object.keys(value.weather)).toContain("temperature");
    expect(value.kinds).toContain("image");
  });

  it("accepts TypeScript and gives a top-level return's value", async () => {
    const result = await run(`
      interface Sum { text: string }
      const add = async (a: number, b: number): Promise<string> => String(await tools.everything.get_sum({ a, b }));
      const text: string = await add(2, 3);
      return { text } satisfies Sum;`);
    expect((result.value as { text: string }).text).toContain("5");
  });

  it("runs the calls of a Promise.all in parallel, up to maxParallelCalls", async () => {
    let inFlight = 0;
    let most = 0;
    const result = await run(
      `const all = await Promise.all(Array.from({ length: 12 }, (_, i) => tools.everything.echo({ message: "m" + i })));\nall`,
      {
        limits: { maxParallelCalls: 4 },
        callTool: async (name, args, signal) => {
          most = Math.max(most, ++inFlight);
          try {
            return await hub.callTool(name, args, signal);
          } finally {
            inFlight--;
          }
        },
      },
    );
    expect(result.value).toEqual(Array.from({ length: 12 }, (_, i) => `Echo: m${i}`));
    expect(most).toBe(4);
  });

  it("throws a tool's error text as a catchable Error", async () => {
    const result = await run(`
      try { await tools.everything.get_sum({ a: "not a number" }); return "no error" }
      catch (e) { return [e instanceof Error, e.message, e.tool] }`);
    const [isError, message, tool] = result.value as [boolean, string, string];
    expect(isError).toBe(true);
    expect(message.length).toBeGreaterThan(0);
    expect(tool).toBe("tools.everything.get_sum");
  });

  it("fails with CODE_ERROR, the line and the column of an uncaught throw", async () => {
    const error = await failure(run(`const a = 1;\nconsole.log("before");\nnull.x;`));
    expect(error.code).toBe("CODE_ERROR");
    expect(error.message).toContain("cannot read property 'x' of null");
    expect([error.line, error.column]).toEqual([3, 5]);
    expect(error.logs).toEqual(["before"]);
  });

  it("names the tools that exist when the script asks for one that does not", async () => {
    const error = await failure(run(`await tools.github.search_issues({})`));
    expect(error.code).toBe("CODE_ERROR");
    expect(error.message).toContain("tools.github does not exist; tools has everything");
    const inside = await failure(run(`await tools.everything.nope()`));
    expect(inside.message).toMatch(/tools\.everything\.nope does not exist; tools\.everything has .*echo/);
  });

  it.each([
    ["JavaScript", "let x = ;", 1, 9],
    ["TypeScript", "const ok = 1;\nlet x: = 3", 2, 8],
    ["an import", 'import fs from "node:fs";\nfs', 1, 1],
    ["a break out of the wrapper", "}); (function () {", 1, 1],
  ])("reports a syntax error in %s with its position", async (_, code, line, column) => {
    const error = await failure(run(code));
    expect(error.code).toBe("CODE_SYNTAX");
    expect([error.line, error.column]).toEqual([line, column]);
    expect(error.message).toContain(`line ${line}`);
  });

  it("gives nothing when the script returns nothing, and only the logs as output", async () => {
    const result = await run(`console.warn("careful"); for (const x of [1]) {}`);
    expect(result.value).toBeUndefined();
    expect(result.output).toBe("[warn] careful");
  });

  it("starts every run in a fresh runtime", async () => {
    await run(`globalThis.leftover = 42; Object.prototype.polluted = true; 1`);
    const result = await run(`[typeof leftover, ({}).polluted]`);
    expect(result.value).toEqual(["undefined", null]);
  });

  it("rejects bad options with INVALID_ARGUMENT naming the option", async () => {
    for (const [options, path] of [
      [{ code: 1 }, "code"],
      [{ code: "1", limits: { wallMs: -1 } }, "limits.wallMs"],
      [{ code: "1", limits: { walMs: 1 } }, "limits.walMs"],
      [{ code: "1", limits: { memoryBytes: 8 * 1024 ** 3 } }, "limits.memoryBytes"],
      [{ code: "1", tools: [{ server: "a", name: "", exposed: "a__" }] }, "tools[0].name"],
    ] as const) {
      const error = await runCode({ tools: [], callTool: hub.callTool, ...options } as never).catch((e) => e);
      expect(error).toBeInstanceOf(McplexError);
      expect(error).toMatchObject({ code: "INVALID_ARGUMENT", path });
    }
  });
});

describe("cancelling a run", () => {
  it("rejects with REQUEST_ABORTED and aborts the signals of the calls in flight", async () => {
    const controller = new AbortController();
    const started = hub.nextCall();
    const running = run(
      `await Promise.all([tools.everything.trigger_long_running_operation({ duration: 30, steps: 3 }), tools.everything.trigger_long_running_operation({ duration: 30, steps: 3 })])`,
      { signal: controller.signal },
    );
    const call = await firstCall(running, started);
    expect(call.signal.aborted).toBe(false);
    controller.abort(new Error("user pressed stop"));
    const error = await failure(running);
    expect(error.code).toBe("REQUEST_ABORTED");
    expect(hub.calls.slice(-2).map((c) => c.signal.aborted)).toEqual([true, true]);
  });

  it("aborts the calls in flight when the time limit ends the run", async () => {
    const started = hub.nextCall();
    // Long enough for the worker to make its call on a loaded machine (300 ms was not, once).
    const running = run(`await tools.everything.trigger_long_running_operation({ duration: 30, steps: 3 })`, {
      limits: { wallMs: 2_000 },
    });
    const call = await firstCall(running, started);
    const error = await failure(running);
    expect(error.code).toBe("CODE_TIMEOUT");
    expect(error.message).toContain("limits.wallMs");
    expect(call.signal.aborted).toBe(true);
  });

  it("keeps the host's event loop free while a script spins in a slow builtin, and stops it at the limit", async () => {
    const called = hub.nextCall();
    let finished = false;
    const running = run(
      `await tools.everything.echo({ message: "first" });\nconsole.log("spinning");\nconst big = "x".repeat(4e6);\nfor (;;) big.indexOf("y");`,
      { limits: { wallMs: 2_000 } },
    ).finally(() => {
      finished = true;
    });
    await firstCall(running, called);
    // Twenty turns of the host's event loop while the script spins: QuickJS checks its interrupt
    // handler too rarely here to give the thread back, so it must not be the host's thread.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(finished).toBe(false);
    const error = await failure(running);
    expect(error.code).toBe("CODE_TIMEOUT");
    // The worker was killed, so these lines came as they were written.
    expect(error.logs).toEqual(["spinning"]);
  });

  it("does not start when the signal is already aborted", async () => {
    const error = await failure(run("1", { signal: AbortSignal.abort() }));
    expect(error.code).toBe("REQUEST_ABORTED");
  });
});
