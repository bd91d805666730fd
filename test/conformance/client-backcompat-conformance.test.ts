import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_22 } from "../support/node22.js";
import { CONFORMANCE_CLI } from "./run-server-suite.js";

/**
 * The conformance suite's client scenarios of the 2025-03-26 authorization (no requirement set
 * scores them) against the hub, with test/conformance/client.ts as the client: a server with no
 * protected resource metadata whose OAuth metadata is at its own root, and one with no metadata
 * at all, where the client falls back to the default endpoints at the server's root.
 */
const SCENARIOS = ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"];
const COMMAND = "sh test/conformance/client.sh";
const DONE_MARKER = "mcplex-conformance-client: done";

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "mcplex-backcompat-client-"));
});
afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("the conformance suite's 2025-03-26 authorization client scenarios against the hub", () => {
  it.each(SCENARIOS)("%s passes", { timeout: 120_000 }, async (scenario) => {
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
    const checks = JSON.parse(await readFile(join(out, found!), "utf8")) as Array<{
      id: string;
      status: string;
      errorMessage?: string;
    }>;
    const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
    expect(bad, `${JSON.stringify(bad)}\n${output.slice(-3000)}`).toEqual([]);
    expect(checks.filter((c) => c.status === "SUCCESS").length).toBeGreaterThan(0);
    const stdout = await readFile(join(out, dirname(found!), "stdout.txt"), "utf8").catch(() => "");
    expect(stdout).toContain(`${DONE_MARKER} ${scenario}`);
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
