/**
 * Real servers from npm, launched as their READMEs say (`npx -y @modelcontextprotocol/...`), run
 * inside the sandbox: they list and call as they do outside it, see the paths the config gives
 * them, and nothing else.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SANDBOX_DEFAULTS } from "../../src/config/read-sandbox.js";
import type { SandboxConfig, ServerConfig } from "../../src/config/types.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, stdio } from "../support/config.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcplex-sandboxed-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function npx(name: string, pkg: string, args: string[], sandbox: SandboxConfig, env = {}): ServerConfig {
  return stdio(name, "npx", ["-y", pkg, ...args], { sandbox, env } as never);
}

async function started(servers: ServerConfig[]): Promise<Hub> {
  const hub = new Hub({ config: configOf(servers) });
  cleanups.push(() => hub.close());
  await hub.start();
  for (const server of hub.servers()) expect(server, server.error).toMatchObject({ state: "ready" });
  return hub;
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe("sandboxed npm servers", () => {
  it("server-memory keeps its graph in the sandbox's private /tmp", async () => {
    const hub = await started([
      npx("memory", "@modelcontextprotocol/server-memory", [], SANDBOX_DEFAULTS, {
        MEMORY_FILE_PATH: "/tmp/memory.jsonl",
      }),
    ]);
    const created = await hub.callTool("memory__create_entities", {
      entities: [{ name: "sandbox", entityType: "idea", observations: ["contained"] }],
    });
    expect(created.isError).not.toBe(true);
    expect(text(await hub.callTool("memory__read_graph", {}))).toContain("contained");
  });

  it("server-filesystem reads and writes its configured directory, and is refused outside it", async () => {
    const shared = tempDir();
    const outside = tempDir();
    writeFileSync(join(shared, "hello.txt"), "hello from the host");
    writeFileSync(join(outside, "secret.txt"), "not shared");
    const hub = await started([
      npx("fs", "@modelcontextprotocol/server-filesystem", [shared], {
        ...SANDBOX_DEFAULTS,
        fs: { read: [], write: [shared] },
      }),
    ]);
    expect(hub.tools().map((t) => t.name)).toContain("fs__read_text_file");
    expect(text(await hub.callTool("fs__read_text_file", { path: join(shared, "hello.txt") }))).toBe(
      "hello from the host",
    );
    await hub.callTool("fs__write_file", { path: join(shared, "out.txt"), content: "written inside" });
    expect(readFileSync(join(shared, "out.txt"), "utf8")).toBe("written inside");
    const refused = await hub.callTool("fs__read_text_file", { path: join(outside, "secret.txt") });
    expect(refused.isError).toBe(true);
  });

  it("refuses a package that is not installed, saying how to install it", async () => {
    const hub = new Hub({
      config: configOf([npx("missing", "@mcplex-test/not-installed@1.0.0", [], SANDBOX_DEFAULTS)]),
    });
    cleanups.push(() => hub.close());
    await hub.start();
    const [server] = hub.servers();
    expect(server?.state).toBe("failed");
    expect(server?.error).toMatch(
      /runs @mcplex-test\/not-installed from where it is installed, and it is not: run `npx -y @mcplex-test\/not-installed@1\.0\.0 --help` once/,
    );
  });

  it("server-everything lists and calls as it does unsandboxed", async () => {
    const hub = await started([
      npx("everything", "@modelcontextprotocol/server-everything", [], SANDBOX_DEFAULTS),
      stdio("plain", "npx", ["-y", "@modelcontextprotocol/server-everything"]),
    ]);
    const names = (server: string) =>
      hub
        .tools()
        .filter((t) => t.server === server)
        .map((t) => t.name.split("__")[1])
        .sort();
    expect(names("everything")).toEqual(names("plain"));
    expect(names("everything")).toContain("echo");
    expect(text(await hub.callTool("everything__echo", { message: "inside" }))).toContain("inside");
  });
});
