import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modulesLoaded } from "../support/modules-loaded.js";

// A client spawns `mcplex serve --stdio` for every session, so what its start loads is felt each
// time (bench/startup-bench.ts): the bundle, and nothing a stdio session does not use.
describe("mcplex serve --stdio start", () => {
  let dir: string;
  let config: string;
  let modules: string[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-start-"));
    config = join(dir, "mcplex.yaml");
    await writeFile(
      config,
      `servers:\n  echo:\n    command: ${process.execPath}\n    args: [${resolve("bench/echo-server.mjs")}]\n`,
    );
    modules = await modulesLoaded(config);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("runs from the bundle: no module from node_modules (the SDK, zod, yaml's files), none from dist/ outside it", () => {
    const bundle = pathToFileURL(resolve("dist/bin")).href;
    expect(modules.filter((m) => m.startsWith("file:"))).not.toEqual([]);
    expect(modules.filter((m) => m.startsWith("file:") && !m.startsWith(`${bundle}/`))).toEqual([]);
  });

  it("loads a few files of the bundle: each stage of the start is one chunk (scripts/bundle-cli.mjs)", () => {
    const bundle = `${pathToFileURL(resolve("dist/bin")).href}/`;
    const spawned = modules.findIndex(
      (line) => line.startsWith("spawn ") && line.includes("echo-server.mjs"),
    );
    const files = (lines: string[]) =>
      lines.filter((m) => m.startsWith(bundle)).map((m) => m.slice(bundle.length));
    const before = files(modules.slice(0, spawned));
    const after = files(modules.slice(spawned));
    // With esbuild's chunks alone: 24 files before the spawn and 29 after, each a module for
    // Node's ESM loader to resolve, read, compile and link.
    expect(before.length, before.join(" ")).toBeLessThanOrEqual(6);
    expect(after.length, after.join(" ")).toBeLessThanOrEqual(5);
    expect(before.filter((f) => f.startsWith("serve-start-"))).toHaveLength(1);
    expect(after.filter((f) => f.startsWith("serve-stdio-"))).toHaveLength(1);
  });

  it("starts its server once: the hub takes the process started ahead", () => {
    expect(
      modules.filter((line) => line.startsWith("spawn ") && line.includes("echo-server.mjs")),
    ).toHaveLength(1);
  });

  it("starts the server's process before the hub's code loads (seen in the tsc build, a file per module)", async () => {
    const trace = await modulesLoaded(config, {}, resolve("dist/cli/main.js"));
    const spawned = trace.findIndex((line) => line.startsWith("spawn ") && line.includes("echo-server.mjs"));
    expect(spawned).toBeGreaterThan(0);
    const hub = `${pathToFileURL(resolve("dist/hub")).href}/`;
    expect(trace.slice(0, spawned).filter((m) => m.startsWith(hub))).toEqual([]);
    expect(trace.slice(spawned)).toContain(`${hub}hub.js`);
  });

  it("loads no HTTP code", () => {
    expect(modules).not.toContain("node:http");
    expect(modules.filter((m) => /\/(http-front|dashboard|ws-front|metrics)-/.test(m))).toEqual([]);
  });
});
