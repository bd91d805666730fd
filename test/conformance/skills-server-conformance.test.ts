import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveHttp } from "../support/gateway.js";
import { runServerSuite, summarize, unmetRequirements } from "./run-server-suite.js";

/**
 * The conformance suite's skills scenarios (SEP-2640, extension scenarios: no requirement set
 * scores them) against `mcplex serve --http` in pass-through mode (`prefix: ""`) in front of
 * `test/fixtures/servers/skills-server.mjs`, a server of skills written by hand (the SDK has no
 * skills): once as a 2026-07-28 upstream and once as a 2025 one, each scenario at both wires.
 * Every check must pass or be skipped by the scenario itself; warnings are allowed only where a
 * scenario writes one for what the fixture serves on purpose (none today).
 */
const SCENARIOS = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"];
const TIMEOUT = 120_000;

async function startGateway(era: "2026" | "2025"): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "mcplex-skills-conformance-"));
  const config = join(dir, "mcplex.yaml");
  const legacy = era === "2025" ? ", --legacy" : "";
  await writeFile(
    config,
    `serve:\n  readyWait: 1m\nservers:\n  skills:\n    command: ${process.execPath}\n    args: [${resolve("test/fixtures/servers/skills-server.mjs")}, --origin, conformance${legacy}]\n    prefix: ""\n`,
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

describe.each(["2026", "2025"] as const)(
  "skills scenarios through mcplex in front of a %s upstream",
  (era) => {
    let gateway: { url: string; stop: () => Promise<void> };
    beforeAll(async () => {
      gateway = await startGateway(era);
    }, 60_000);
    afterAll(() => gateway?.stop());

    for (const scenario of SCENARIOS) {
      it.each(["2026-07-28", "2025-11-25"] as const)(
        `${scenario} passes at the %s wire`,
        async (specVersion) => {
          const run = await runServerSuite({ url: gateway.url, scenario, specVersion, force: true });
          const result = run.results.get(scenario);
          const problems = unmetRequirements(run, [scenario]);
          expect(problems, `${problems.join("\n")}\n\n${summarize(run)}\n${run.output.slice(-3000)}`).toEqual(
            [],
          );
          const checks = result?.checks ?? [];
          console.log(
            `${scenario} (${era} upstream, ${specVersion}): ${result?.passed} passed, ${checks.filter((c) => c.status === "SKIPPED").length} skipped, ${result?.warnings} warnings`,
          );
          expect(result?.passed ?? 0).toBeGreaterThan(0);
          expect(
            checks.filter((c) => c.status === "WARNING").map((c) => `${c.id}: ${c.errorMessage}`),
          ).toEqual([]);
        },
        TIMEOUT,
      );
    }
  },
);
