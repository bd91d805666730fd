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
  let modules: string[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-start-"));
    const config = join(dir, "mcplex.yaml");
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

  it("loads no HTTP code", () => {
    expect(modules).not.toContain("node:http");
    expect(modules.filter((m) => /\/(http-front|dashboard|ws-front|metrics)-/.test(m))).toEqual([]);
  });
});
