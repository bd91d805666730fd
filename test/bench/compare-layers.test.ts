/**
 * bench:compare's optional layers: each layered target runs the plain mcplex target's config
 * with its layer's block added (a config mcplex reads), its rows are differences with plain
 * mcplex round by round, and the page says what plain mcplex runs and how each layer is on.
 * (That every layered target answers is in compare-quick.test.ts.)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  LAYER_CONCURRENCY,
  type LayerCosts,
  layerRows,
  renderLayerCosts,
} from "../../bench/compare/layer-costs.js";
import { LAYERS, type LayerSupport, layerTargets, withLayerTargets } from "../../bench/compare/layers.js";
import type { Cell } from "../../bench/compare/measure.js";
import { start, targets } from "../../bench/compare/targets.js";
import { parseConfig } from "../../src/config/parse-config.js";

const scratch = mkdtempSync(join(tmpdir(), "compare-layers-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const support: LayerSupport = {
  otlp: "http://127.0.0.1:4318",
  issuer: "http://127.0.0.1:9999",
  token: "header.payload.signature",
  stop: async () => {},
};
const layered = layerTargets(targets([], scratch), scratch, support);

describe("bench:compare optional layers", () => {
  it("starts each layer as the plain mcplex target with that layer's config, which mcplex reads", () => {
    const ids = layered.map((s) => `${s.front} ${s.id}`);
    for (const layer of LAYERS)
      for (const front of layer.fronts) expect(ids).toContain(`${front} mcplex+${layer.id}`);
    expect(ids).toContain("stdio mcplex");
    expect(ids).toContain("http mcplex");
    for (const spec of layered) {
      const argv = spec.argv(8420);
      const file = argv[argv.indexOf("--config") + 1]!;
      const config = parseConfig(readFileSync(file, "utf8"), { source: file, env: {} });
      expect(config.servers.map((s) => s.name)).toEqual(["echo"]);
      const layer = spec.id.replace("mcplex+", "");
      expect(config.audit !== undefined).toBe(layer === "audit");
      expect(config.telemetry?.enabled === true).toBe(layer === "telemetry");
      expect(config.auth !== undefined).toBe(layer === "sign-in");
      expect((config.guardrails?.length ?? 0) > 0).toBe(layer === "guardrails");
      expect(argv.includes("--dashboard-port")).toBe(layer === "dashboard");
    }
    const signIn = layered.find((s) => s.id === "mcplex+sign-in")!;
    expect(signIn.headers).toEqual({ authorization: "Bearer header.payload.signature" });
  });

  it("reads each layer against plain mcplex of the same round, and puts every layer on the page", () => {
    // Plain mcplex's figures move over the rounds; every layer stays 10 µs of CPU and 20 µs of
    // p50 above them, at 0.8 of its calls/s.
    const cell = (cpu: number[], p50: number[], rate: number[]): Cell => ({
      p50,
      p99: p50,
      rate,
      cpuPerCall: cpu,
      rss: [],
    });
    const plainCpu = [50, 80, 65];
    const plainP50 = [100, 300, 200];
    const plainRate = [1000, 2000, 1500];
    const fronts = (["stdio", "http"] as const).map((front) => {
      const specs = layered.filter((s) => s.front === front);
      const cells = new Map(
        specs.map((s) => {
          const extra = s.id === "mcplex" ? 0 : 1;
          return [
            s.id,
            new Map(
              LAYER_CONCURRENCY.map((c) => [
                c,
                cell(
                  plainCpu.map((v) => v + 10 * extra),
                  plainP50.map((v) => v + 20 * extra),
                  plainRate.map((v) => v * (extra ? 0.8 : 1)),
                ),
              ]),
            ),
          ];
        }),
      );
      return { front, specs, cells, failures: new Map<string, string>() };
    });
    const costs: LayerCosts = { load: { rounds: 3, seconds: 1, warmUp: 1 }, fronts, seconds: 60 };
    const rows = layerRows(costs);
    expect(rows).toHaveLength(layered.length - 2);
    for (const r of rows) {
      expect(r.cpu64).toEqual({ median: 10, min: 10, max: 10 });
      expect(r.p50).toEqual({ median: 20, min: 20, max: 20 });
      expect(r.rate64?.median).toBeCloseTo(0.8);
    }
    const page = renderLayerCosts(costs).join("\n");
    expect(page).toContain("## Optional layers");
    // What plain mcplex runs, said as it is: metrics and the dashboard over HTTP, neither on stdio.
    expect(page).toMatch(/over Streamable HTTP, `serve --http` runs the Prometheus metrics/);
    expect(page).toMatch(/over stdio, `serve --stdio` starts no HTTP front/);
    for (const layer of LAYERS) expect(page).toContain(`| ${layer.label} |`);
    expect(page).toContain("3 rounds");
  });

  it("serves the sign-in layer only to the bearer of the issuer's token", async () => {
    // Needs dist/ (npm run build), as the bench does.
    await withLayerTargets(targets([], scratch), scratch, async (all) => {
      const signIn = all.find((s) => s.id === "mcplex+sign-in")!;
      const { headers: _, ...anonymous } = signIn;
      await expect(start(anonymous)).rejects.toThrow(/HTTP 401/);
      const forged = {
        ...signIn,
        headers: { authorization: `Bearer ${signIn.headers!.authorization!.slice(7, -4)}AAAA` },
      };
      await expect(start(forged)).rejects.toThrow(/HTTP 401/);
      const r = await start(signIn);
      await r.stop();
    });
  }, 120_000);
});
