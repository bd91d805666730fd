/**
 * mcplex run by an ordinary user (here: root's tests drop to uid 1000 with setpriv): bwrap goes
 * through an unprivileged user namespace, no cgroup is writable, and the `processes` limit is
 * held by RLIMIT_NPROC alone, set above what the user already runs (60 other processes here,
 * more than the server's own limit).
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const script = `
// The user already runs more tasks than the server may: RLIMIT_NPROC counts them too.
const { spawn } = await import("node:child_process");
const others = Array.from({ length: 60 }, () => spawn("sleep", ["60"], { stdio: "ignore" }));
const { Hub } = await import(${JSON.stringify(resolve("dist/hub/hub.js"))});
const server = { name: "probe", enabled: true, timeout: 20000, startTimeout: 20000, lazy: false, tools: {},
  transport: "stdio", command: "node", args: [${JSON.stringify(resolve("test/fixtures/servers/sandbox-probe-server.mjs"))}], env: {},
  sandbox: { fs: { read: [], write: [] }, network: "none", memory: 1 << 30, processes: 48, files: 1024 } };
const hub = new Hub({ config: { source: "t", format: "mcplex", servers: [server], profiles: {}, tokens: [], secrets: [] } });
await hub.start();
const status = hub.servers()[0];
const fork = status.state === "ready" ? JSON.parse((await hub.callTool("probe__probe", { kind: "fork", count: 300 })).content[0].text) : undefined;
const read = status.state === "ready" ? JSON.parse((await hub.callTool("probe__probe", { kind: "read", path: "/etc/shadow" })).content[0].text) : undefined;
console.log(JSON.stringify({ state: status.state, error: status.error, fork, read }));
await hub.close();
for (const other of others) other.kill();
`;

describe("a sandbox started by an unprivileged user", () => {
  it.skipIf(process.getuid?.() !== 0)(
    "starts beside the user's other processes, and stops a fork bomb by RLIMIT_NPROC",
    () => {
      const out = execFileSync(
        "setpriv",
        [
          "--reuid=1000",
          "--regid=1000",
          "--clear-groups",
          process.execPath,
          "--input-type=module",
          "-e",
          script,
        ],
        { encoding: "utf8", timeout: 60_000, cwd: "/tmp", env: { ...process.env, HOME: "/tmp" } },
      );
      const result = JSON.parse(out.trim().split("\n").pop()!);
      expect(result).toMatchObject({
        state: "ready",
        fork: { ok: false, code: "EAGAIN" },
        read: { ok: false },
      });
      expect(result.fork.started).toBeLessThan(48);
    },
  );
});
