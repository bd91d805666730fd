import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS, type ServeProcess, serveHttp } from "../support/gateway.js";
import { NODE_22 } from "../support/node22.js";
import { CONFORMANCE_CLI, runServerSuite, summarize, unmetRequirements } from "./run-server-suite.js";
import { PENDING_SERVER_SCENARIOS } from "./scenario-outcomes.js";

/**
 * The official conformance suite's tasks scenarios (SEP-2663, `io.modelcontextprotocol/tasks`)
 * against `mcplex serve --http` in pass-through mode (one upstream, `prefix: ""`) in front of
 * test/fixtures/servers/tasks-server.ts, which implements the tools the scenarios call. Every
 * check of every scenario must pass through the gateway: task ids are handles the gateway minted,
 * routed back to the fixture by `Mcp-Name` and body.
 *
 * One scenario is skipped by the suite itself, and is expected to say so:
 * `tasks-status-notifications` (its harness reads the tools/call POST stream, while SEP-2663
 * sends `notifications/tasks` on `subscriptions/listen`; test/gateway/tasks.test.ts covers
 * that stream through the gateway).
 */
const SKIPPED_BY_THE_SUITE = "tasks-status-notifications";
/** The tasks scenarios among the runner's pending ones (scenario-outcomes.ts keeps that list). */
const SCENARIOS = PENDING_SERVER_SCENARIOS.filter(
  (s) => s.startsWith("tasks-") && s !== SKIPPED_BY_THE_SUITE,
);

let dir: string;
let gateway: ServeProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-tasks-conformance-"));
  const config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "servers:",
      "  jobs:",
      `    command: ${JSON.stringify(COMMANDS.tasks.command)}`,
      `    args: ${JSON.stringify(COMMANDS.tasks.args)}`,
      '    prefix: ""',
      "",
    ].join("\n"),
  );
  gateway = await serveHttp(["--config", config]);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("the conformance suite's tasks scenarios through mcplex serve --http", () => {
  it("lists no tasks scenario this file does not run", async () => {
    const { stdout } = await promisify(execFile)(NODE_22, [CONFORMANCE_CLI, "list", "--server"]);
    const listed = [...stdout.matchAll(/^\s*- (tasks-[\w-]+)/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...SCENARIOS, SKIPPED_BY_THE_SUITE].sort());
  });

  it.each(SCENARIOS)(
    "passes %s",
    async (scenario) => {
      const run = await runServerSuite({ url: gateway.url, scenario });
      const problems = unmetRequirements(run);
      expect(problems, `${problems.join("\n")}\n\n${summarize(run)}\n${run.output.slice(-2000)}`).toEqual([]);
      // Every check ran: none skipped or untestable for want of a task.
      const checks = run.results.get(scenario)?.checks ?? [];
      expect(checks.filter((c) => c.status !== "SUCCESS").map((c) => c.id)).toEqual([]);
    },
    120_000,
  );

  it(`${SKIPPED_BY_THE_SUITE} is skipped by the suite itself`, async () => {
    const run = await runServerSuite({ url: gateway.url, scenario: SKIPPED_BY_THE_SUITE });
    const checks = run.results.get(SKIPPED_BY_THE_SUITE)?.checks ?? [];
    expect(checks.map((c) => c.status)).toEqual(["SKIPPED"]);
    expect(checks[0]?.errorMessage).toMatch(/subscriptions\/listen/);
  }, 120_000);
});
