import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runnerList, scoredClientScenarios } from "../../scripts/conformance-table.js";
import { NODE_22 } from "../support/node22.js";
import { type Check, CONFORMANCE_CLI, type ScenarioResult } from "./run-server-suite.js";
import { CLIENT_EXCEPTIONS, clientScenarioTest, unexpectedOutcomes } from "./scenario-outcomes.js";

/**
 * The conformance suite's client scenarios that neither client-conformance.test.ts nor
 * skills-client-conformance.test.ts runs, against the hub with test/conformance/client.ts as the
 * client, one at a time: the 2025-03-26 authorization ones (no requirement set scores them) and
 * the authorization extensions no test runs yet. Each must pass and finish, except those
 * scenario-outcomes.ts names in `CLIENT_EXCEPTIONS`, which must come out as named: one that starts
 * passing fails this test, so that the list and the table made from it stay true.
 */
const COMMAND = "sh test/conformance/client.sh";
const DONE_MARKER = "mcplex-conformance-client: done";
const THIS_FILE = "client-other-conformance.test.ts";

const scored = scoredClientScenarios();
const SCENARIOS = runnerList()
  .client.map((s) => s.name)
  .filter((s) => clientScenarioTest(s, scored) === THIS_FILE);

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "mcplex-other-client-"));
});
afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("the conformance client scenarios no other test runs, against the hub", () => {
  it("are the 2025-03-26 authorization scenarios and the listed exceptions", () => {
    expect(SCENARIOS).toEqual(
      expect.arrayContaining([
        "auth/2025-03-26-oauth-metadata-backcompat",
        "auth/2025-03-26-oauth-endpoint-fallback",
        ...Object.keys(CLIENT_EXCEPTIONS),
      ]),
    );
  });

  it.each(SCENARIOS)("%s comes out as scenario-outcomes.ts says", { timeout: 120_000 }, async (scenario) => {
    const out = join(work, scenario.replace("/", "-"));
    const output = await run([
      CONFORMANCE_CLI,
      "client",
      "--command",
      COMMAND,
      "--scenario",
      scenario,
      "--timeout",
      "60000",
      "-o",
      out,
    ]);
    const found = (await readdir(out, { recursive: true })).find((e) => e.endsWith("checks.json"));
    expect(found, output.slice(-3000)).toBeDefined();
    const checks = JSON.parse(await readFile(join(out, found!), "utf8")) as Check[];
    const count = (status: Check["status"]) => checks.filter((c) => c.status === status).length;
    const result: ScenarioResult = {
      scenario,
      passed: count("SUCCESS"),
      failed: count("FAILURE"),
      warnings: count("WARNING"),
      checks,
    };
    const problems = unexpectedOutcomes(
      { required: [scenario], results: new Map([[scenario, result]]) },
      CLIENT_EXCEPTIONS,
    );
    console.log(
      `${scenario}: ${result.passed}/${checks.length} passed${problems.length > 0 ? "" : " (as listed)"}`,
    );
    expect(problems, output.slice(-3000)).toEqual([]);
    if (CLIENT_EXCEPTIONS[scenario] === undefined) {
      const stdout = await readFile(join(out, dirname(found!), "stdout.txt"), "utf8").catch(() => "");
      expect(stdout).toContain(`${DONE_MARKER} ${scenario}`);
    }
  });
});

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_22, args, {
      stdio: ["ignore", "pipe", "pipe"],
      signal: AbortSignal.timeout(110_000),
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", () => resolve(output));
  });
}
