/**
 * Generates docs/reference/conformance.md: every scenario of the official MCP conformance suite
 * (server, client, authorization server) and what mcplex does with it. The scenarios and their
 * spec versions come from the runner's own `list` (run with Node 22, the runner's need); which
 * requirement set scores each, from the runner's requirements/*.yaml; pass or why not, from
 * test/conformance/scenario-outcomes.ts, the hand-kept list the conformance tests check.
 * `npm run docs:reference` writes it; test/docs/conformance-table.test.ts fails when the page
 * and the runner's list differ.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parse } from "yaml";
import {
  AUTHORIZATION_SERVER_REASON,
  CLIENT_EXCEPTIONS,
  clientScenarioTest,
  PENDING_SERVER_SCENARIOS,
  SERVER_EXCEPTIONS,
  SERVER_EXCEPTIONS_BEHIND_2025,
  type ScenarioException,
} from "../test/conformance/scenario-outcomes.js";
import { NODE_22 } from "../test/support/node22.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const RUNNER_DIR = dirname(require.resolve("@modelcontextprotocol/conformance/package.json"));
const REQUIREMENT_SETS = ["2025-11-25", "2026-07-28"] as const;
export const CONFORMANCE_PAGE = "docs/reference/conformance.md";

/** One scenario as `conformance list` prints it: `  - name [2025-11-25,2026-07-28]`. */
export interface ListedScenario {
  name: string;
  /** The spec versions it applies to, or `["extension"]`. */
  versions: string[];
}

/** The runner's scenarios by side, as its `list` prints them. */
export interface RunnerList {
  server: ListedScenario[];
  client: ListedScenario[];
  authorization: ListedScenario[];
}

const SECTIONS: Record<string, keyof RunnerList> = {
  "Server scenarios": "server",
  "Client scenarios": "client",
  "Authorization server scenarios": "authorization",
};

/** Parses the output of `conformance list`. */
export function parseRunnerList(output: string): RunnerList {
  const list: RunnerList = { server: [], client: [], authorization: [] };
  let side: keyof RunnerList | undefined;
  for (const line of output.split("\n")) {
    const heading = Object.keys(SECTIONS).find((h) => line.startsWith(h));
    if (heading !== undefined) side = SECTIONS[heading];
    const item = /^\s+- (\S+) \[([^\]]*)\]$/.exec(line);
    if (item === null) continue;
    if (side === undefined) throw new Error(`conformance list: a scenario before any heading: ${line}`);
    list[side].push({ name: item[1]!, versions: item[2]!.split(",") });
  }
  return list;
}

/** Runs `conformance list` with Node 22 and parses it. */
export function runnerList(): RunnerList {
  const output = execFileSync(NODE_22, [join(RUNNER_DIR, "dist", "index.js"), "list"], { encoding: "utf8" });
  return parseRunnerList(output);
}

/** The runner's version, from its package.json. */
export function runnerVersion(): string {
  return (JSON.parse(readFileSync(join(RUNNER_DIR, "package.json"), "utf8")) as { version: string }).version;
}

interface RequirementsFile {
  server: string[];
  client: string[];
  not_scored?: Array<{ scenario: string; leg: string; reason: string }>;
}

interface Scoring {
  scoredIn: string[];
  /** Why a set runs it without scoring (`extension`, `pending`...), and which sets. */
  notScored: Map<string, string[]>;
}

/** Per scenario (`server:name`, `client:name`): the sets scoring it, or why none does. */
function scoring(): Map<string, Scoring> {
  const map = new Map<string, Scoring>();
  const entry = (key: string) => {
    let e = map.get(key);
    if (e === undefined) map.set(key, (e = { scoredIn: [], notScored: new Map() }));
    return e;
  };
  for (const set of REQUIREMENT_SETS) {
    const file = parse(readFileSync(join(RUNNER_DIR, "requirements", `${set}.yaml`), "utf8")) as RequirementsFile;
    for (const name of file.server) entry(`server:${name}`).scoredIn.push(set);
    for (const name of file.client) entry(`client:${name}`).scoredIn.push(set);
    for (const n of file.not_scored ?? []) {
      const why = entry(`${n.leg}:${n.scenario}`).notScored;
      why.set(n.reason, [...(why.get(n.reason) ?? []), set]);
    }
  }
  return map;
}

/**
 * The server suites a scenario is in: `draft` (new in 2026-07-28, as the runner's `--suite draft`
 * picks them), `pending`, both, or else `active`.
 */
export function serverSuites(scenario: ListedScenario): Array<"draft" | "pending" | "active"> {
  const suites: Array<"draft" | "pending"> = [];
  if (scenario.versions.length === 1 && scenario.versions[0] === "2026-07-28") suites.push("draft");
  if (PENDING_SERVER_SCENARIOS.includes(scenario.name)) suites.push("pending");
  return suites.length === 0 ? ["active"] : suites;
}

function outcomeCell(exception: ScenarioException | undefined, behind2025?: ScenarioException): string {
  if (exception === undefined)
    return behind2025 === undefined ? "pass" : `pass; ${behind2025.kind} behind a 2025 upstream: ${behind2025.reason}`;
  const kind = { skipped: "skipped by the suite", "not-exercised": "not exercised", fails: "fails" }[exception.kind];
  return `${kind}: ${exception.reason}`;
}

function scoredCell(side: string, name: string, scores: ReturnType<typeof scoring>): string {
  const s = scores.get(`${side}:${name}`);
  if (s === undefined) return "no set runs it";
  const cells = [...s.scoredIn];
  for (const [reason, sets] of s.notScored) cells.push(`not scored: ${reason} (${sets.join(", ")})`);
  return cells.join("; ");
}

/** One table row: the scenario's name in backticks, then the cells (`|` escaped). */
const row = (name: string, ...cells: string[]) =>
  `| \`${name}\` | ${cells.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;

/** The page's text for this runner list. */
export function conformancePage(list: RunnerList, version: string): string {
  const scores = scoring();
  const server = list.server.map((s) =>
    row(
      s.name,
      s.versions.join(", "),
      serverSuites(s).join(", "),
      scoredCell("server", s.name, scores),
      outcomeCell(SERVER_EXCEPTIONS[s.name], SERVER_EXCEPTIONS_BEHIND_2025[s.name]),
    ),
  );
  const client = list.client.map((s) => {
    const test = clientScenarioTest(s.name);
    return row(
      s.name,
      s.versions.join(", "),
      scoredCell("client", s.name, scores),
      outcomeCell(CLIENT_EXCEPTIONS[s.name]),
      `test/conformance/${test}`,
    );
  });
  const authorization = list.authorization.map((s) =>
    row(s.name, s.versions.join(", "), AUTHORIZATION_SERVER_REASON),
  );
  return [
    "# Conformance",
    "",
    "<!-- Generated by `npm run docs:reference` (scripts/conformance-table.ts) from the runner's",
    "`list` and test/conformance/scenario-outcomes.ts: edit those, not this page. -->",
    "",
    `Every scenario of the official MCP conformance suite, \`@modelcontextprotocol/conformance\``,
    `${version} (a dev dependency, run by the tests under test/conformance/ with Node 22), and what`,
    "mcplex does with it. *Versions* is what the runner's `list` says a scenario applies to;",
    "*Scored in* names the requirement sets (`--requirements`) that score it, or why a set runs it",
    "without scoring. A scenario passes when it has passing checks and no failed or warning ones;",
    "*not exercised* means no check passed or failed (the scenario found nothing it could test).",
    "",
    "## Server scenarios",
    "",
    "Against `mcplex serve --http` in pass-through mode in front of the suite's fixtures over stdio",
    "(test/conformance/everything-server.ts, test/fixtures/servers/tasks-server.ts and",
    "skills-server.mjs): test/conformance/gateway-draft-conformance.test.ts runs the runner's",
    "`--suite all`, `--suite draft` and `--suite pending`, each scenario at its default wire",
    "(2026-07-28 for the draft and extension scenarios, 2025-11-25 for the others), in front of",
    "2026 fixtures, and `--suite all` again in front of 2025 ones (the tasks fixture stays 2026).",
    "gateway-server-conformance.test.ts runs both requirement sets in front of a 2026 and a 2025",
    "upstream. *Suite*: `active` is the runner's default, `draft` the scenarios new in 2026-07-28,",
    "`pending` those the suite's own reference fixture cannot pass yet.",
    "",
    "| Scenario | Versions | Suite | Scored in | Through the gateway |",
    "| --- | --- | --- | --- | --- |",
    ...server,
    "",
    "## Client scenarios",
    "",
    "Against the hub as a client (test/conformance/client.ts).",
    "",
    "| Scenario | Versions | Scored in | The hub as client | Test |",
    "| --- | --- | --- | --- | --- |",
    ...client,
    "",
    "## Authorization server scenarios",
    "",
    "| Scenario | Versions | mcplex |",
    "| --- | --- | --- |",
    ...authorization,
    "",
  ].join("\n");
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(join(ROOT, CONFORMANCE_PAGE), conformancePage(runnerList(), runnerVersion()));
  console.log(`wrote ${CONFORMANCE_PAGE}`);
}
