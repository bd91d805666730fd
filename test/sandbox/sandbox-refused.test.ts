/**
 * Where the kernel refuses the namespaces bubblewrap needs, a sandboxed server does not start
 * unconfined: its start fails saying so and how to fix it. The refusal is real: mcplex runs as
 * an unprivileged user inside an outer bwrap that turns user namespaces off (`--disable-userns`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const script = `
const { Hub } = await import(${JSON.stringify(resolve("dist/hub/hub.js"))});
const server = { name: "memory", enabled: true, timeout: 10000, startTimeout: 10000, lazy: false, tools: {},
  transport: "stdio", command: "node", args: ["-e", "setInterval(() => {}, 1000)"], env: {},
  sandbox: { fs: { read: [], write: [] }, network: "none", memory: 1 << 30, processes: 256, files: 1024 } };
const hub = new Hub({ config: { source: "test", format: "mcplex", servers: [server], profiles: {}, tokens: [], secrets: [] } });
await hub.start();
console.log(JSON.stringify(hub.servers()[0]));
await hub.close();
`;

/** Runs `command` as an unprivileged user for whom the kernel creates no user namespace. */
const WITHOUT_USERNS = [
  ...["--dev-bind", "/", "/", "--unshare-user", "--uid", "1000", "--gid", "1000"],
  ...["--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--"],
];

describe("a sandbox the kernel refuses", () => {
  it("fails the server's start with the reason and the fix, and runs nothing unconfined", () => {
    const out = execFileSync(
      "bwrap",
      [...WITHOUT_USERNS, process.execPath, "--input-type=module", "-e", script],
      {
        encoding: "utf8",
        timeout: 30_000,
      },
    );
    const server = JSON.parse(out.trim().split("\n").pop()!) as { state: string; error: string };
    expect(server.state).toBe("failed");
    expect(server.error).toMatch(/cannot start in a sandbox: the kernel refused bubblewrap's namespaces/);
    expect(server.error).toMatch(/kernel\.unprivileged_userns_clone=1/);
    expect(server.error).toMatch(/remove `sandbox:`/);
  });

  it("makes mcplex doctor fail the sandbox check with the fix", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcplex-refused-"));
    try {
      const config = join(dir, "mcplex.yaml");
      writeFileSync(
        config,
        `servers:\n  quick:\n    command: ${process.execPath}\n    args: [-e, "0"]\n    sandbox: true\n`,
      );
      const run = spawnSync(
        "bwrap",
        [
          ...WITHOUT_USERNS,
          process.execPath,
          resolve("dist/bin/mcplex.js"),
          "doctor",
          "--json",
          "--port",
          "0",
          "--config",
          config,
        ],
        {
          encoding: "utf8",
          timeout: 60_000,
          env: { ...process.env, MCPLEX_LLM_BASE_URL: "", MCPLEX_LLM_MODEL: "" },
        },
      );
      const { checks } = JSON.parse(run.stdout) as {
        checks: Array<{ area: string; status: string; message: string; hint?: string }>;
      };
      const sandbox = checks.find((check) => check.area === "sandbox");
      expect(sandbox).toMatchObject({
        status: "fail",
        message: "servers cannot be sandboxed here (for quick)",
      });
      expect(sandbox?.hint).toMatch(/user namespaces are off here/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
