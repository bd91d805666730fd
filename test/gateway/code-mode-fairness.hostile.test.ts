import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The served gateway runs on this machine: its shared workers are this many too.
import { MAX_WORKERS } from "../../src/code-mode/sandbox-queue.js";
import {
  COMMANDS,
  connectHttp,
  eventually,
  rawHttp,
  resultText,
  type ServeProcess,
  serveHttp,
  yamlConfig,
} from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// The attack (issue 23): token A sends 16 concurrent run_code calls looping forever, under
// `serve: {mode: code, code: {timeout: 5s}}`; token B's `return 1` then waited for A's scripts
// to time out two by two (39.8 s, against 147 ms alone). Each client now has its own queue and
// a worker of its own: B's script starts at once whatever A does.

const A = "token-for-client-a-0123456789";
const B = "token-for-client-b-0123456789";
/** The tester's time limit: each of A's loops holds a worker this long. */
const LOOP_MS = 5_000;
/**
 * B's whole call, alone about 150 ms, must answer within this on a loaded two-core machine with
 * A's loops burning both cores: well under {@link LOOP_MS}, so B cannot meet it by waiting for a
 * worker of A's, and loose enough for a worker to start beside A's loops ("within a second",
 * with the margin a shared machine needs).
 */
const B_BOUND_MS = 3_000;

let dir: string;
let served: ServeProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-code-fair-"));
  const config = join(dir, "mcplex.yaml");
  const extra = [
    "serve:",
    "  readyWait: 1m",
    "  mode: code",
    "  code:",
    "    timeout: 5s",
    "tokens:",
    `  - token: ${A}`,
    `  - token: ${B}`,
  ].join("\n");
  await writeFile(config, yamlConfig({ memory: COMMANDS.memory }, extra));
  served = await serveHttp(["--config", config]);
}, 60_000);

afterAll(async () => {
  await served?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const connect = (token: string) => connectHttp(served.url, { token, name: "fairness" });

/** A metric's value on the gateway's /metrics (operator token), or undefined when absent. */
async function metric(line: string): Promise<number | undefined> {
  const res = await rawHttp(`${served.origin}/metrics`, {
    method: "GET",
    headers: { authorization: `Bearer ${A}` },
  });
  const found = res.body.split("\n").find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

/** Times one `return 1` of `client`. */
async function timedReturn(client: Client): Promise<number> {
  const start = performance.now();
  const result = await client.callTool({ name: "run_code", arguments: { code: "return 1" } });
  const ms = performance.now() - start;
  expect(result.isError).not.toBe(true);
  expect(resultText(result)).toBe("1");
  return ms;
}

describe("run_code is fair between clients", () => {
  it("another client's script starts at once while one client's infinite loops hold every shared worker", {
    timeout: attackTimeout(60_000, 120_000),
  }, async () => {
    const a = await connect(A);
    const b = await connect(B);
    try {
      await timedReturn(b); // the first run loads the sandbox
      const alone = await timedReturn(b);
      // More loops than shared workers, so some wait in A's queue.
      const loops = attackSize(MAX_WORKERS + 2, Math.max(16, MAX_WORKERS + 2));
      const attack = Array.from({ length: loops }, () =>
        a.callTool({ name: "run_code", arguments: { code: "while (true) {}" } }, { timeout: 120_000 }),
      );
      // Every shared worker is held by A's loops, and the rest of them wait in A's queue.
      await eventually(
        async () =>
          (await metric('mcplex_code_scripts{state="waiting"}')) === loops - MAX_WORKERS ? true : undefined,
        { what: "A's loops running and queued", intervalMs: 50 },
      );
      const underAttack = await timedReturn(b);
      expect(underAttack).toBeLessThan(B_BOUND_MS);
      // A's loops end at their time limit, or are refused as busy past the queue's bound.
      const outcomes = (await Promise.all(attack)).map((r) => /^([A-Z_]+):/.exec(resultText(r))?.[1]);
      for (const outcome of outcomes) expect(["CODE_TIMEOUT", "CODE_BUSY"]).toContain(outcome);
      const busy = outcomes.filter((o) => o === "CODE_BUSY").length;
      reportFigure(
        "run_code fairness",
        `B's return 1: ${alone.toFixed(0)} ms alone, ${underAttack.toFixed(0)} ms under ${loops} loops of A (${LOOP_MS} ms limit); A: ${loops - busy} timed out, ${busy} refused busy`,
      );
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
