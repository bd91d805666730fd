import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveHttp } from "../support/gateway.js";
import {
  type RequirementSet,
  runServerSuite,
  type ServerSuiteRun,
  serverRequirements,
  summarize,
  unmetRequirements,
} from "./run-server-suite.js";

/**
 * The official conformance server suite against `mcplex serve --http` in pass-through mode
 * (`prefix: ""`), in front of our conformance "everything" fixture over stdio: once as a
 * 2026-07-28 upstream and once as a 2025-11-25 upstream. Every scored scenario must pass
 * with checks to show for it, and so must the pending ones (http-header-validation,
 * json-schema-2020-12, http-custom-header-server-validation).
 *
 * One check cannot pass through a 2025 upstream and is the only exception allowed: a 2025
 * server asks for input with anonymous requests, so the keys a 2026 client sees in
 * `inputRequests` are minted by the gateway (`input_1`...), not the server's own names
 * (the scenario expects `user_name`).
 */
const PENDING: Record<RequirementSet, string[]> = {
  "2026-07-28": ["http-header-validation", "json-schema-2020-12", "http-custom-header-server-validation"],
  "2025-11-25": ["json-schema-2020-12"],
};
const KEY_NAMES_LOST_IN_2025_HOP = {
  scenario: "input-required-result-basic-elicitation",
  check: "sep-2322-elicitation-incomplete",
};

/** Whether the scenario ran and its only failing check is the given one. */
function onlyFails(run: ServerSuiteRun, expected: { scenario: string; check: string }): boolean {
  const failing = (run.results.get(expected.scenario)?.checks ?? []).filter((c) => c.status === "FAILURE");
  return failing.length > 0 && failing.every((c) => c.id === expected.check);
}

const TIMEOUT = 240_000;

async function startGateway(
  upstreamEra: "2026" | "2025",
): Promise<{ url: string; stop: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "mcplex-gw-conformance-"));
  const config = join(dir, "mcplex.yaml");
  const legacy = upstreamEra === "2025" ? ", --legacy-only" : "";
  await writeFile(
    config,
    `servers:\n  everything:\n    command: ${resolve("node_modules/.bin/tsx")}\n    args: [${resolve("test/conformance/everything-server.ts")}, --stdio${legacy}]\n    prefix: ""\n`,
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

describe.each(["2026", "2025"] as const)("mcplex serve --http in front of a %s upstream", (upstreamEra) => {
  let gateway: { url: string; stop: () => Promise<void> };
  beforeAll(async () => {
    gateway = await startGateway(upstreamEra);
  }, 60_000);
  afterAll(() => gateway?.stop());

  it.each(["2025-11-25", "2026-07-28"] as const)(
    "passes every required server scenario of %s, and the pending ones",
    async (set) => {
      const run: ServerSuiteRun = await runServerSuite({ url: gateway.url, requirements: set });
      const { scored } = await serverRequirements(set);
      expect(scored.length).toBe(set === "2026-07-28" ? 37 : 30);
      const lostKeys =
        upstreamEra === "2025" && set === "2026-07-28" && onlyFails(run, KEY_NAMES_LOST_IN_2025_HOP);
      const problems = unmetRequirements(run, [...scored, ...PENDING[set]]).filter(
        (problem) => !(lostKeys && problem.startsWith(`${KEY_NAMES_LOST_IN_2025_HOP.scenario}:`)),
      );
      expect(problems, `${problems.join("\n")}\n\n${summarize(run)}`).toEqual([]);
      for (const scenario of scored)
        expect(run.results.get(scenario)?.checks.length ?? 0, scenario).toBeGreaterThan(0);
    },
    TIMEOUT,
  );
});
