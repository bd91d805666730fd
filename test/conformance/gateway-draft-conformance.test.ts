import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunnerList, runnerList, serverSuites } from "../../scripts/conformance-table.js";
import { COMMANDS, type ServeProcess, serveHttp } from "../support/gateway.js";
import {
  runServerSuite,
  type ScenarioOutcome,
  type ServerSuiteRun,
  type Suite,
  scenarioOutcome,
  summarize,
} from "./run-server-suite.js";
import { PENDING_SERVER_SCENARIOS, SERVER_EXCEPTIONS } from "./scenario-outcomes.js";

/**
 * The runner's server suites `all`, `draft` and `pending` against `mcplex serve --http` in
 * pass-through mode (`prefix: ""`) in front of the three fixtures the scenarios need, each a 2026
 * server over stdio: the "everything" fixture (test/conformance/everything-server.ts), the tasks
 * fixture and the skills fixture. Each scenario runs at its default wire (2026-07-28 for the draft
 * and extension scenarios, 2025-11-25 for the others).
 *
 * Every scenario must pass (passing checks, none failed or warning) except those
 * scenario-outcomes.ts names in `SERVER_EXCEPTIONS`, each with its reason, and those must come
 * out exactly as it says: a listed scenario that starts passing fails this test, so that the
 * list, and the table in docs/reference/conformance.md made from it, stay true. Each run prints
 * a report of every scenario.
 */
const TIMEOUT = 300_000;

let dir: string;
let gateway: ServeProcess;
let listed: RunnerList;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-draft-conformance-"));
  const config = join(dir, "mcplex.yaml");
  const server = (name: string, command: string, args: string[]) => [
    `  ${name}:`,
    `    command: ${JSON.stringify(command)}`,
    `    args: ${JSON.stringify(args)}`,
    '    prefix: ""',
  ];
  await writeFile(
    config,
    [
      "servers:",
      ...server("everything", resolve("node_modules/.bin/tsx"), [
        resolve("test/conformance/everything-server.ts"),
        "--stdio",
      ]),
      ...server("jobs", COMMANDS.tasks.command, COMMANDS.tasks.args),
      ...server("skills", process.execPath, [
        resolve("test/fixtures/servers/skills-server.mjs"),
        "--origin",
        "conformance",
      ]),
      "",
    ].join("\n"),
  );
  gateway = await serveHttp(["--config", config]);
  listed = runnerList();
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** One line per scenario: name, passed/checks, outcome (and the listed reason where there is one). */
function report(suite: Suite, run: ServerSuiteRun): string {
  const rows = run.required.map((scenario) => {
    const result = run.results.get(scenario);
    const outcome = scenarioOutcome(result);
    const why = SERVER_EXCEPTIONS[scenario]?.reason;
    const counts = result === undefined ? "-" : `${result.passed}/${result.checks.length}`;
    return `${scenario.padEnd(48)} ${counts.padStart(6)}  ${outcome}${why === undefined ? "" : `: ${why}`}`;
  });
  return [`--suite ${suite} through the gateway (passed/checks, outcome):`, ...rows].join("\n");
}

/** Scenarios whose outcome is not the one expected: a pass, or the listed exception's kind. */
function surprises(run: ServerSuiteRun): string[] {
  return run.required.flatMap((scenario) => {
    const expected: ScenarioOutcome = SERVER_EXCEPTIONS[scenario]?.kind ?? "pass";
    const got = scenarioOutcome(run.results.get(scenario));
    if (got === expected) return [];
    const result = run.results.get(scenario);
    const bad = (result?.checks ?? [])
      .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
      .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description ?? ""}`);
    return [
      `${scenario}: expected ${expected}, got ${got}${bad.length > 0 ? `\n  ${bad.join("\n  ")}` : ""}`,
    ];
  });
}

async function runAndCheck(suite: Suite): Promise<ServerSuiteRun> {
  const run = await runServerSuite({ url: gateway.url, suite });
  console.log(report(suite, run));
  const problems = surprises(run);
  expect(problems, `${problems.join("\n")}\n\n${summarize(run)}`).toEqual([]);
  // The runner counts a scenario without failures as passed, the not-exercised one included.
  expect(run.exitCode, run.output.slice(-3000)).toBe(0);
  return run;
}

describe("the conformance server suites through mcplex serve --http", () => {
  it("names only scenarios the runner lists", () => {
    const names = new Set(listed.server.map((s) => s.name));
    expect(Object.keys(SERVER_EXCEPTIONS).filter((s) => !names.has(s))).toEqual([]);
    expect(PENDING_SERVER_SCENARIOS.filter((s) => !names.has(s))).toEqual([]);
  });

  it(
    "passes --suite all except the scenarios scenario-outcomes.ts names",
    async () => {
      const run = await runAndCheck("all");
      expect(run.required).toEqual(listed.server.map((s) => s.name));
      // Only the suite's own skips and what a proxy cannot exercise are excused here.
      const excused = run.required.filter((s) => SERVER_EXCEPTIONS[s] !== undefined);
      expect(excused.map((s) => SERVER_EXCEPTIONS[s]?.kind).filter((k) => k === "fails")).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "passes --suite draft, the scenarios new in 2026-07-28",
    async () => {
      const run = await runAndCheck("draft");
      const draft = listed.server.filter((s) => serverSuites(s).includes("draft")).map((s) => s.name);
      expect(run.required).toEqual(draft);
    },
    TIMEOUT,
  );

  it(
    "passes --suite pending except the scenarios scenario-outcomes.ts names",
    async () => {
      const run = await runAndCheck("pending");
      expect(run.required).toEqual([...PENDING_SERVER_SCENARIOS]);
    },
    TIMEOUT,
  );
});
