import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodeModeError, runCode } from "../../src/code-mode/index.js";
import { sandboxWorkerStats } from "../../src/code-mode/sandbox-pool.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { ATTACKS, LIMITS } from "./attacks.js";
import { type HubTools, startHubTools } from "./hub-tools.js";

let hub: HubTools;
beforeAll(async () => {
  hub = await startHubTools();
});
afterAll(() => hub?.close());

describe("hostile scripts in code mode", () => {
  it("each attack gets its error, the next run is clean and the host stays healthy", {
    timeout: attackTimeout(120_000, 900_000),
  }, async () => {
    // get_env would show the host's environment: it is not given to the scripts.
    const tools = hub.tools.filter((t) => t.name !== "get-env");
    const runs = attackSize(ATTACKS.length, 1_000);
    const hostGlobals = Object.getOwnPropertyNames(globalThis).length;
    const rssBefore = process.memoryUsage().rss;
    const workersBefore = sandboxWorkerStats().terminated;
    const seen = new Map<string, number>();
    for (let i = 0; i < runs; i++) {
      const [name, code, expected] = ATTACKS[i % ATTACKS.length]!;
      const limits = expected === "CODE_TIMEOUT" ? LIMITS : { ...LIMITS, wallMs: 10_000 };
      const outcome = await runCode({ code, tools, callTool: hub.callTool, limits }).then(
        (result) => ({ value: result.value }),
        (error: unknown) => (error instanceof CodeModeError ? error.code : error),
      );
      expect([name, outcome]).toEqual([name, expected]);
      seen.set(name, (seen.get(name) ?? 0) + 1);
      const next = await runCode({
        code: "[typeof leftover, typeof escaped, ({}).then, typeof Promise.prototype.then, JSON.parse('[1]')[0]]",
        tools,
        callTool: hub.callTool,
      });
      expect([name, next.value]).toEqual([name, ["undefined", "undefined", null, "function", 1]]);
    }
    const healthy = await runCode({
      code: "const r = await tools.everything.get_sum({ a: 20, b: 22 }); r",
      tools,
      callTool: hub.callTool,
    });
    expect(String(healthy.value)).toContain("42");
    expect(Object.getOwnPropertyNames(globalThis).length).toBe(hostGlobals);
    expect({} as Record<string, unknown>).not.toHaveProperty("then");
    expect(seen.size).toBe(ATTACKS.length);
    reportFigure(
      "code-mode attacks",
      `${runs} attacks (+${runs} clean runs): RSS ${(rssBefore / 2 ** 20).toFixed(0)} -> ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB, ${sandboxWorkerStats().terminated - workersBefore} sandbox workers terminated`,
    );
  });
});
