import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunnerList, runnerList, serverSuites } from "../../scripts/conformance-table.js";
import { COMMANDS, serveHttp } from "../support/gateway.js";
import {
  runServerSuite,
  type ServerSuiteRun,
  type Suite,
  scenarioOutcome,
  summarize,
} from "./run-server-suite.js";
import {
  PENDING_SERVER_SCENARIOS,
  type ScenarioException,
  SERVER_EXCEPTIONS,
  SERVER_EXCEPTIONS_BEHIND_2025,
  unexpectedOutcomes,
} from "./scenario-outcomes.js";

/**
 * The runner's server suites `all`, `draft` and `pending` against `mcplex serve --http` in
 * pass-through mode (`prefix: ""`) in front of the three fixtures the scenarios need, over stdio:
 * the "everything" fixture (test/conformance/everything-server.ts), the tasks fixture and the
 * skills fixture. Each scenario runs at its default wire (2026-07-28 for the draft and extension
 * scenarios, 2025-11-25 for the others). The three suites run in front of 2026 fixtures; `all`
 * runs again in front of 2025 ones (the tasks fixture stays 2026: tasks are a 2026 extension).
 *
 * Every scenario must pass (passing checks, none failed or warning) except those
 * scenario-outcomes.ts names with a reason (`SERVER_EXCEPTIONS`, plus
 * `SERVER_EXCEPTIONS_BEHIND_2025` in front of 2025 fixtures), and those must come out exactly as
 * it says: a listed scenario that starts passing fails this test, so that the list, and the table
 * in docs/reference/conformance.md made from it, stay true. Each run prints a report of every
 * scenario.
 */
const TIMEOUT = 300_000;
type Era = "2026" | "2025";

let listed: RunnerList;
beforeAll(() => {
  listed = runnerList();
});

async function startGateway(era: Era): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "mcplex-draft-conformance-"));
  const config = join(dir, "mcplex.yaml");
  const server = (name: string, command: string, args: string[]) => [
    `  ${name}:`,
    `    command: ${JSON.stringify(command)}`,
    `    args: ${JSON.stringify(args)}`,
    '    prefix: ""',
  ];
  const everything = [resolve("test/conformance/everything-server.ts"), "--stdio"];
  const skills = [resolve("test/fixtures/servers/skills-server.mjs"), "--origin", "conformance"];
  if (era === "2025") {
    everything.push("--legacy-only");
    skills.push("--legacy");
  }
  await writeFile(
    config,
    [
      "servers:",
      ...server("everything", resolve("node_modules/.bin/tsx"), everything),
      ...server("jobs", COMMANDS.tasks.command, COMMANDS.tasks.args),
      ...server("skills", process.execPath, skills),
      "",
    ].join("\n"),
  );
  const served = await serveHttp(["--config", config]);
  return {
    url: served.url,
    stop: async () => {
      await served.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function exceptionsFor(era: Era): Readonly<Record<string, ScenarioException>> {
  return era === "2026" ? SERVER_EXCEPTIONS : { ...SERVER_EXCEPTIONS, ...SERVER_EXCEPTIONS_BEHIND_2025 };
}

/** One line per scenario: name, passed/checks, outcome (and the listed reason where there is one). */
function report(title: string, run: ServerSuiteRun, exceptions: Record<string, ScenarioException>): string {
  const rows = run.required.map((scenario) => {
    const result = run.results.get(scenario);
    const why = exceptions[scenario]?.reason;
    const counts = result === undefined ? "-" : `${result.passed}/${result.checks.length}`;
    return `${scenario.padEnd(48)} ${counts.padStart(6)}  ${scenarioOutcome(result)}${why === undefined ? "" : `: ${why}`}`;
  });
  return [`${title} (passed/checks, outcome):`, ...rows].join("\n");
}

describe("the scenario lists", () => {
  it("name only scenarios the runner lists", () => {
    const names = new Set(listed.server.map((s) => s.name));
    const named = [
      ...Object.keys(SERVER_EXCEPTIONS),
      ...Object.keys(SERVER_EXCEPTIONS_BEHIND_2025),
      ...PENDING_SERVER_SCENARIOS,
    ];
    expect(named.filter((s) => !names.has(s))).toEqual([]);
  });
});

/** The suites each era runs: the draft and pending ones are subsets of `all`, run once. */
const SUITES: Record<Era, Suite[]> = { "2026": ["all", "draft", "pending"], "2025": ["all"] };

describe.each(["2026", "2025"] as const)(
  "the conformance server suites through mcplex serve --http in front of %s fixtures",
  (era) => {
    let gateway: { url: string; stop: () => Promise<void> };
    beforeAll(async () => {
      gateway = await startGateway(era);
    }, 60_000);
    afterAll(() => gateway?.stop());

    async function runAndCheck(suite: Suite): Promise<ServerSuiteRun> {
      const exceptions = exceptionsFor(era);
      const run = await runServerSuite({ url: gateway.url, suite });
      console.log(report(`--suite ${suite} in front of ${era} fixtures`, run, exceptions));
      const problems = unexpectedOutcomes(run, exceptions);
      expect(problems, `${problems.join("\n")}\n\n${summarize(run)}`).toEqual([]);
      return run;
    }

    it(
      "passes --suite all except the scenarios scenario-outcomes.ts names",
      async () => {
        const run = await runAndCheck("all");
        expect(run.required).toEqual(listed.server.map((s) => s.name));
        // The runner counts a scenario without failures as passed, the not-exercised one included.
        if (era === "2026") expect(run.exitCode, run.output.slice(-3000)).toBe(0);
      },
      TIMEOUT,
    );

    if (SUITES[era].includes("draft"))
      it(
        "passes --suite draft, the scenarios new in 2026-07-28",
        async () => {
          const run = await runAndCheck("draft");
          const draft = listed.server.filter((s) => serverSuites(s).includes("draft")).map((s) => s.name);
          expect(run.required).toEqual(draft);
        },
        TIMEOUT,
      );

    if (SUITES[era].includes("pending"))
      it(
        "passes --suite pending except the scenarios scenario-outcomes.ts names",
        async () => {
          const run = await runAndCheck("pending");
          expect(run.required).toEqual([...PENDING_SERVER_SCENARIOS]);
        },
        TIMEOUT,
      );
  },
);
