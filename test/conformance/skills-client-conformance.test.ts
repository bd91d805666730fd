import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_22 } from "../support/node22.js";

/**
 * The conformance suite's skills client scenarios (SEP-2640: extension scenarios, in no
 * requirement set) against the hub, with `test/conformance/client.ts` as the client: it lists
 * the skills, loads the one skill (reading its SKILL.md only then) and reads a supporting file.
 * Each scenario's mock server serves a SKILL.md that does not match its entry, so a passing
 * client refuses the skill and never reads the supporting file; `no-prefetch` passes when
 * listing reads no file at all.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(import.meta.url);
const CONFORMANCE = dirname(require.resolve("@modelcontextprotocol/conformance/package.json"));
const COMMAND = "sh test/conformance/client.sh";
const DONE_MARKER = "mcplex-conformance-client: done";
const SCENARIOS = [
  "sep-2640-client-no-prefetch",
  "sep-2640-client-verify-digest",
  "sep-2640-client-verify-size",
  "sep-2640-client-verify-frontmatter",
];

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "mcplex-skills-client-"));
});
afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("the conformance suite's skills client scenarios against the hub", () => {
  it.each(SCENARIOS)("%s passes", { timeout: 120_000 }, async (scenario) => {
    const out = join(work, scenario);
    const { output } = await run(NODE_22, [
      join(CONFORMANCE, "dist", "index.js"),
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
    const dir = (await readdir(out, { recursive: true })).find((e) => e.endsWith("checks.json"));
    expect(dir, output.slice(-3000)).toBeDefined();
    const checks = JSON.parse(await readFile(join(out, dir!), "utf8")) as Array<{
      id: string;
      status: string;
      errorMessage?: string;
    }>;
    const stdout = await readFile(join(out, dirname(dir!), "stdout.txt"), "utf8").catch(() => "");
    const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
    expect(bad, `${JSON.stringify(bad)}\n${output.slice(-3000)}`).toEqual([]);
    const passed = checks.filter((c) => c.status === "SUCCESS").map((c) => c.id);
    console.log(`${scenario}: ${passed.length}/${checks.length} passed (${passed.join(", ")})`);
    expect(passed.some((id) => id.startsWith("sep-2640-host-"))).toBe(true);
    expect(stdout).toContain(`${DONE_MARKER} ${scenario}`);
  });
});

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      signal: AbortSignal.timeout(110_000),
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
