import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

const SERVER = resolve("test/fixtures/servers/rpc-error-server.mjs");

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-call-owner-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A config of fixture servers that each write `<name>.started` in `markers` when spawned. */
async function configOf(
  name: string,
  servers: Array<{ name: string; extra?: string[] }>,
): Promise<{ config: string; started: () => string[] }> {
  const markers = join(dir, name);
  await rm(markers, { recursive: true, force: true });
  const { mkdir } = await import("node:fs/promises");
  await mkdir(markers);
  const lines = ["servers:"];
  for (const server of servers) {
    lines.push(
      `  ${server.name}:`,
      `    command: ${process.execPath}`,
      `    args: [${SERVER}, --marker, ${join(markers, `${server.name}.started`)}, --tool, ${server.name}_echo]`,
      ...(server.extra ?? []).map((line) => `    ${line}`),
    );
  }
  const config = join(dir, `${name}.yaml`);
  await writeFile(config, `${lines.join("\n")}\n`);
  const started = () => servers.map((s) => s.name).filter((s) => existsSync(join(markers, `${s}.started`)));
  return { config, started };
}

describe("mcplex call starts only the server its tool name points at", { timeout: 60_000 }, () => {
  it("spawns the owning server alone when the prefix says which", async () => {
    const { config, started } = await configOf("one", [
      { name: "alpha" },
      { name: "beta" },
      { name: "gamma" },
      { name: "delta" },
    ]);
    const out = await runCli(["call", "gamma__gamma_echo", '{"message":"hi"}', "--config", config]);
    expect(out.stdout.trim()).toBe("echo: hi");
    expect(out.code).toBe(0);
    expect(started()).toEqual(["gamma"]);
  });

  it("starts a lazy owner for the call", async () => {
    const { config, started } = await configOf("lazy", [
      { name: "alpha" },
      { name: "beta", extra: ["lazy: true"] },
    ]);
    const out = await runCli(["call", "beta__beta_echo", '{"message":"lazy"}', "--config", config]);
    expect(out.stdout.trim()).toBe("echo: lazy");
    expect(started()).toEqual(["beta"]);
  });

  it("falls back to every server when the owner lacks the tool, then names the nearest", async () => {
    const { config, started } = await configOf("fallback", [{ name: "alpha" }, { name: "beta" }]);
    const out = await runCli(["call", "alpha__beta_echo", "--config", config]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("did you mean");
    expect(started()).toEqual(["alpha", "beta"]);
  });

  it("starts nothing for a disabled server's tool, and says how to enable it; exit 3", async () => {
    const { config, started } = await configOf("disabled", [
      { name: "alpha", extra: ["enabled: false"] },
      { name: "beta" },
    ]);
    const out = await runCli(["call", "alpha__alpha_echo", "--config", config]);
    expect(out.stderr).toContain("hint: set servers.alpha.enabled to true");
    expect(out.code).toBe(3);
    expect(started()).toEqual([]);
  });

  it("starts every server when one has no prefix, since any name may be its", async () => {
    const { config, started } = await configOf("unprefixed", [
      { name: "alpha" },
      { name: "beta", extra: ['prefix: ""'] },
    ]);
    const out = await runCli(["call", "alpha__alpha_echo", '{"message":"x"}', "--config", config]);
    expect(out.code).toBe(0);
    expect(started()).toEqual(["alpha", "beta"]);
  });

  it("uses a configured prefix, not the server name", async () => {
    const { config, started } = await configOf("prefixed", [
      { name: "alpha", extra: ["prefix: gh"] },
      { name: "beta" },
    ]);
    const out = await runCli(["call", "gh__alpha_echo", '{"message":"p"}', "--config", config]);
    expect(out.stdout.trim()).toBe("echo: p");
    expect(started()).toEqual(["alpha"]);
  });
});
