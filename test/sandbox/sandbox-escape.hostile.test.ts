/**
 * What a hostile server tried to get out of its sandbox, each through a real probe server
 * (test/fixtures/servers/sandbox-probe-server.mjs) in real bubblewrap:
 * - a sandboxed twin of an unsandboxed server (same command and arguments) getting the plain
 *   one's process, in either order, in the hub, `mcplex serve --stdio` and `mcplex call`;
 * - writing past `memory` to /dev/shm, and writing /dev at all;
 * - a new user namespace, ptrace of a process beside it, and the other calls of the seccomp filter;
 * - reading mcplex.yaml, its lock file, audit.log and .env beside the server's own script.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { SANDBOX_DEFAULTS } from "../../src/config/read-sandbox.js";
import { Hub } from "../../src/hub/hub.js";
import { DENIED_SYSCALLS, SECCOMP_ARCHES } from "../../src/sandbox/seccomp-filter.js";
import { CLI, runCli } from "../support/cli.js";
import { configOf, stdio } from "../support/config.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

const PROBE = resolve("test/fixtures/servers/sandbox-probe-server.mjs");
const dir = mkdtempSync(join(tmpdir(), "mcplex-sandbox-escape-"));
/** A host file only root may read (the tests run as root, as the tester did). */
const hostSecret = join(dir, "host-secret.txt");

type Outcome = { ok: boolean; code?: string; errno?: number; pids?: number[]; [key: string]: unknown };

const textOf = (result: unknown): string =>
  ((result as { content: Array<{ text: string }> }).content[0] as { text: string }).text;

function twinsConfig(boxedFirst: boolean): string {
  const folder = join(dir, boxedFirst ? "boxed-first" : "plain-first");
  mkdirSync(folder, { recursive: true });
  const plain = `  plain: { command: node, args: [${JSON.stringify(PROBE)}], sandbox: false }\n`;
  const boxed = `  boxed: { command: node, args: [${JSON.stringify(PROBE)}], sandbox: { network: none } }\n`;
  const file = join(folder, "mcplex.yaml");
  writeFileSync(file, `servers:\n${boxedFirst ? boxed + plain : plain + boxed}`);
  return file;
}

/** What the sandboxed twin and the plain one each read and see, through one caller. */
interface TwinView {
  boxedSecret: Outcome;
  boxedShadow: Outcome;
  boxedPids: Outcome;
  plainSecret: Outcome;
}

async function viewThrough(call: (server: string, args: Record<string, unknown>) => Promise<Outcome>) {
  return {
    boxedSecret: await call("boxed", { kind: "read", path: hostSecret }),
    boxedShadow: await call("boxed", { kind: "read", path: "/etc/shadow" }),
    boxedPids: await call("boxed", { kind: "pids" }),
    plainSecret: await call("plain", { kind: "read", path: hostSecret }),
  } satisfies TwinView;
}

function expectApart(view: TwinView, caller: string): void {
  reportFigure(
    `sandboxed twin through ${caller}`,
    `host secret read: ${view.boxedSecret.ok}, /etc/shadow read: ${view.boxedShadow.ok}, pids seen: ${view.boxedPids.pids?.length}`,
  );
  // The plain twin reads the host: the probe works, and the two are not one process.
  expect(view.plainSecret).toMatchObject({ ok: true, text: "root only" });
  expect(view.boxedSecret).toMatchObject({ ok: false, code: "ENOENT" });
  expect(view.boxedShadow).toMatchObject({ ok: false, code: "ENOENT" });
  // Its own PID namespace: bwrap's init, the server and its children, nothing of the host.
  expect(view.boxedPids.pids?.length).toBeLessThan(10);
  expect(view.boxedPids.pids).not.toContain(process.pid);
}

beforeAll(() => {
  writeFileSync(hostSecret, "root only", { mode: 0o600 });
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("a sandboxed server and an unsandboxed twin (same command and arguments)", () => {
  for (const boxedFirst of [true, false]) {
    const order = boxedFirst ? "sandboxed one first" : "unsandboxed one first";

    it(`are two processes in the hub, ${order}`, async () => {
      const config = await loadConfig({ config: twinsConfig(boxedFirst), cwd: dir });
      const hub = new Hub({ config });
      try {
        await hub.start();
        const call = async (server: string, args: Record<string, unknown>) =>
          JSON.parse(textOf(await hub.callTool(`${server}__probe`, args))) as Outcome;
        expectApart(await viewThrough(call), `the hub (${order})`);
      } finally {
        await hub.close();
      }
    }, 30_000);

    it(`are two processes under mcplex serve --stdio, ${order}`, async () => {
      const client = new Client({ name: "hostile", version: "1.0.0" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, "serve", "--stdio", "--config", twinsConfig(boxedFirst)],
          stderr: "ignore",
          env: getDefaultEnvironment(),
        }),
      );
      try {
        const call = async (server: string, args: Record<string, unknown>) =>
          JSON.parse(textOf(await client.callTool({ name: `${server}__probe`, arguments: args }))) as Outcome;
        expectApart(await viewThrough(call), `mcplex serve --stdio (${order})`);
      } finally {
        await client.close();
      }
    }, 30_000);

    it(`are two processes under mcplex call, ${order}`, async () => {
      const config = twinsConfig(boxedFirst);
      const call = async (server: string, args: Record<string, unknown>) => {
        const run = await runCli(["call", `${server}__probe`, JSON.stringify(args), "--config", config]);
        expect(run.code, run.stderr).toBe(0);
        return JSON.parse(run.stdout) as Outcome;
      };
      expectApart(await viewThrough(call), `mcplex call (${order})`);
    }, 60_000);
  }
});

describe("inside the sandbox", () => {
  let hub: Hub;
  const probe = async (args: Record<string, unknown>) => {
    const text = textOf(await hub.callTool("probe__probe", args));
    reportFigure(`sandbox escape ${JSON.stringify(args)}`, text);
    return JSON.parse(text) as Outcome;
  };

  beforeAll(async () => {
    const sandbox = { ...SANDBOX_DEFAULTS, memory: 256 * 1024 ** 2 };
    hub = new Hub({ config: configOf([stdio("probe", "node", [PROBE], { sandbox } as never)]) });
    await hub.start();
    const [server] = hub.servers();
    if (server?.state !== "ready") throw new Error(`the probe did not start: ${JSON.stringify(server)}`);
  }, 30_000);

  afterAll(async () => {
    await hub?.close();
  });

  it(
    "cannot fill /dev/shm past its share of memory",
    async () => {
      const outcome = await probe({ kind: "fill", path: "/dev/shm/filler", mib: attackSize(400, 4096) });
      expect(outcome).toMatchObject({ ok: false, code: "ENOSPC" });
      // A quarter of the 256 MiB `memory`; /tmp has the rest.
      expect(outcome.written as number).toBeLessThanOrEqual(64);
    },
    attackTimeout(30_000, 120_000),
  );

  it("cannot write /dev, and still writes its devices", async () => {
    expect(await probe({ kind: "fill", path: "/dev/planted", mib: 1 })).toMatchObject({
      ok: false,
      code: "EROFS",
    });
    expect(await probe({ kind: "write", path: "/dev/null" })).toMatchObject({ ok: true });
  });

  it("runs under a seccomp filter", async () => {
    expect(await probe({ kind: "status", field: "Seccomp" })).toMatchObject({ ok: true, value: "2" });
  });

  const arch = SECCOMP_ARCHES[process.arch];
  it.skipIf(arch === undefined)("cannot make a user namespace, by unshare or by clone", async () => {
    const CLONE_NEWUSER = 0x10000000;
    const SIGCHLD = 17;
    const nr = arch as NonNullable<typeof arch>;
    expect(await probe({ kind: "syscall", nr: nr.unshare, args: [CLONE_NEWUSER] })).toMatchObject({
      ok: false,
      errno: 1,
    });
    expect(
      await probe({ kind: "syscall", nr: nr.clone, args: [CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0] }),
    ).toMatchObject({ ok: false, errno: 1 });
  });

  it.skipIf(arch === undefined)("cannot ptrace a process beside it", async () => {
    const PTRACE_ATTACH = 16;
    expect(
      await probe({ kind: "syscall", nr: arch?.numbers.ptrace, args: [PTRACE_ATTACH, "child", 0, 0] }),
    ).toMatchObject({ ok: false, errno: 1 });
  });

  it.skipIf(arch === undefined)("gets EPERM from every call the filter lists", async () => {
    const through: string[] = [];
    for (const name of DENIED_SYSCALLS) {
      const nr = arch?.numbers[name];
      if (nr === undefined) continue;
      // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING) succeeds anywhere the filter is not.
      const args = name === "keyctl" ? [0, -3, 0] : [0, 0, 0, 0];
      const outcome = await probe({ kind: "syscall", nr, args });
      if (outcome.ok || outcome.errno !== 1) through.push(`${name}: ${JSON.stringify(outcome)}`);
    }
    reportFigure("denied calls not refused with EPERM", String(through.length));
    expect(through).toEqual([]);
  });
});

describe("a server run from beside its config", () => {
  it("reads its own script, and not mcplex.yaml, the lock file, audit.log or .env", async () => {
    const folder = join(dir, "project");
    mkdirSync(folder);
    copyFileSync(PROBE, join(folder, "server.mjs"));
    writeFileSync(
      join(folder, "mcplex.yaml"),
      "servers:\n  probe: { command: node, args: [./server.mjs], sandbox: true }\n",
    );
    const neighbours = ["mcplex.yaml", "mcplex.lock.json", "audit.log", ".env"];
    writeFileSync(join(folder, "mcplex.lock.json"), "{}");
    writeFileSync(join(folder, "audit.log"), "audit\n");
    writeFileSync(join(folder, ".env"), "TOKEN=secret\n");
    const run = await runCli(
      [
        "call",
        "probe__probe",
        JSON.stringify({
          kind: "reads",
          paths: ["server.mjs", ...neighbours].map((name) => join(folder, name)),
        }),
        "--config",
        "mcplex.yaml",
      ],
      { cwd: folder },
    );
    expect(run.code, run.stderr).toBe(0);
    const readable = (JSON.parse(run.stdout) as { readable: string[] }).readable.map((path) =>
      path.slice(folder.length + 1),
    );
    reportFigure("files beside the config read from the sandbox", readable.join(", "));
    // Its own script, and nothing beside it.
    expect(readable).toEqual(["server.mjs"]);
  }, 60_000);
});
