// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig, loadConfig, resolveConfigPath } from "../../src/config/index.js";
import { ConfigError } from "../../src/errors.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-discovery-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const yaml = (name: string) => `servers:\n  ${name}:\n    command: echo\n`;

describe("config discovery", () => {
  it("falls back to the embedded read-only workspace server when there is no file", async () => {
    expect(await resolveConfigPath({ cwd: dir })).toBeUndefined();
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config).toEqual(defaultConfig(dir));
    expect(config.source).toBe("<default>");
    expect(config.format).toBe("default");
    expect(config.servers).toEqual([
      {
        name: "workspace",
        transport: "workspace",
        root: dir,
        allowWrite: false,
        rules: [],
        enabled: true,
        timeout: 60_000,
        startTimeout: 30_000,
        lazy: false,
        tools: {},
      },
    ]);
  });

  it("prefers mcplex.yaml, then mcplex.yml, then mcplex.json", async () => {
    await writeFile(join(dir, "mcplex.json"), JSON.stringify({ servers: { fromjson: { command: "echo" } } }));
    expect(await resolveConfigPath({ cwd: dir })).toBe(join(dir, "mcplex.json"));
    await writeFile(join(dir, "mcplex.yml"), yaml("fromyml"));
    expect(await resolveConfigPath({ cwd: dir })).toBe(join(dir, "mcplex.yml"));
    await writeFile(join(dir, "mcplex.yaml"), yaml("fromyaml"));
    expect(await resolveConfigPath({ cwd: dir })).toBe(join(dir, "mcplex.yaml"));
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.servers.map((s) => s.name)).toEqual(["fromyaml"]);
  });

  it("skips a directory that happens to be called mcplex.yaml", async () => {
    await mkdir(join(dir, "mcplex.yaml"));
    await writeFile(join(dir, "mcplex.json"), JSON.stringify({ servers: {} }));
    expect(await resolveConfigPath({ cwd: dir })).toBe(join(dir, "mcplex.json"));
  });

  it("uses an explicit --config file relative to cwd over the discovered ones", async () => {
    await writeFile(join(dir, "mcplex.yaml"), yaml("discovered"));
    await mkdir(join(dir, "conf"));
    await writeFile(join(dir, "conf", "other.yaml"), yaml("explicit"));
    expect(await resolveConfigPath({ cwd: dir, config: "conf/other.yaml" })).toBe(
      join(dir, "conf", "other.yaml"),
    );
    const config = await loadConfig({ cwd: dir, config: "conf/other.yaml", env: {} });
    expect(config.servers.map((s) => s.name)).toEqual(["explicit"]);
  });

  it("fails with CONFIG_NOT_FOUND naming the path when --config does not exist", async () => {
    const error = await resolveConfigPath({ cwd: dir, config: "missing.yaml" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "CONFIG_NOT_FOUND" });
    expect((error as Error).message).toContain(join(dir, "missing.yaml"));
    await expect(loadConfig({ cwd: dir, config: "missing.yaml" })).rejects.toMatchObject({
      code: "CONFIG_NOT_FOUND",
    });
  });

  it("resolves relative cwd and root against the config file's directory", async () => {
    await mkdir(join(dir, "conf"));
    await writeFile(
      join(dir, "conf", "mcplex.yaml"),
      "servers:\n  a:\n    command: echo\n    cwd: ../work\n  ws:\n    type: workspace\n",
    );
    const config = await loadConfig({ cwd: dir, config: "conf/mcplex.yaml", env: {} });
    expect(config.servers[0]).toMatchObject({ cwd: join(dir, "work") });
    expect(config.servers[1]).toMatchObject({ root: join(dir, "conf") });
  });

  it("does not open the secret store when the file uses no secrets", async () => {
    await writeFile(join(dir, "mcplex.yaml"), yaml("plain"));
    const store = {
      readAll: () => Promise.reject(new Error("must not be called")),
    };
    await expect(loadConfig({ cwd: dir, env: {}, secrets: store })).resolves.toMatchObject({
      format: "mcplex",
    });
  });
});
