import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import type { Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxConfig } from "../config/types.js";
import { requireSandbox } from "./find-bwrap.js";
import { startFilterProxy } from "./host-filter-proxy.js";
import { programDirs, serverPackage } from "./server-package.js";

/** The descriptor bwrap reads the seccomp program from (`--seccomp 3`): the spawn's fourth stdio. */
export const SECCOMP_FD = 3;

/** A sandboxed launch: what to spawn instead, and what to undo once the process has exited. */
export interface SandboxLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The seccomp program, to be written to the child's {@link SECCOMP_FD} and closed. */
  seccomp: Buffer;
  /** Stops the host side (the filtering proxy, its socket, the pids cgroup); safe to call twice. */
  release(): void;
}

/** What a server sees of /etc: enough to resolve names, verify TLS and know users, not the rest. */
const ETC_FILES = [
  "/etc/resolv.conf",
  "/etc/hosts",
  "/etc/host.conf",
  "/etc/gai.conf",
  "/etc/nsswitch.conf",
  "/etc/passwd",
  "/etc/group",
  "/etc/localtime",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/alternatives",
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/pki",
  "/etc/mime.types",
];

/** Where the filtering proxy is reached inside the sandbox's own network namespace. */
const PROXY_PORT = 3128;
const PROXY_DIR = "/run/mcplex-proxy";

/**
 * The in-sandbox end of the proxy: listens on the sandbox's loopback, forwards each connection to
 * the host proxy's Unix socket, and runs the server. Plain Node, no dependencies: it is written
 * beside the socket and bound in read-only.
 */
const FORWARDER = `import { connect, createServer } from "node:net";
import { spawn } from "node:child_process";
const [socketPath, port, command, ...args] = process.argv.slice(2);
const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
  client.pipe(upstream).pipe(client);
});
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(command, args, { stdio: "inherit" });
  child.on("error", (error) => { process.stderr.write(String(error) + "\\n"); process.exit(127); });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
});
`;

/** The system directories, bound read-only, or recreated as the symlinks they are (merged /usr). */
function systemArgs(): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const dir of ["/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"]) {
    if (!existsSync(dir)) continue;
    if (lstatSync(dir).isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else args.push("--ro-bind", dir, dir);
  }
  for (const path of ETC_FILES) args.push("--ro-bind-try", path, path);
  return args;
}

let cgroups = 0;
const PIDS_CGROUP = "/sys/fs/cgroup/pids";

/**
 * How the `processes` limit is held here: by a pids cgroup of each server's own (cgroup v1
 * writable by mcplex), or only by RLIMIT_NPROC, which counts all of the user's processes and
 * binds no process of root.
 */
export function processLimitKind(): "cgroup" | "rlimit" {
  try {
    accessSync(PIDS_CGROUP, constants.W_OK);
    return "cgroup";
  } catch {
    return "rlimit";
  }
}

/**
 * A pids cgroup (v1, when mcplex may create one) capping processes and threads: RLIMIT_NPROC
 * counts every process of the user, and does not bind root at all. `undefined` where cgroups are
 * not writable; the rlimit is then what holds.
 */
function pidsCgroup(processes: number): string | undefined {
  const root = PIDS_CGROUP;
  try {
    accessSync(root, constants.W_OK);
    removeStaleCgroups(root);
    const dir = join(root, `mcplex-${process.pid}-${++cgroups}`);
    mkdirSync(dir);
    writeFileSync(join(dir, "pids.max"), String(processes));
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * Tasks (processes and threads) the user already runs: RLIMIT_NPROC counts them all, so the
 * server's `processes` come on top of them. 0 for root, whom RLIMIT_NPROC does not bind.
 */
function userTasks(): number {
  const uid = process.getuid?.() ?? 0;
  if (uid === 0) return 0;
  let tasks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (statSync(`/proc/${entry}`).uid === uid) tasks += readdirSync(`/proc/${entry}/task`).length;
    } catch {}
  }
  return tasks;
}

/**
 * Removes the empty cgroups of mcplex processes that are gone: one killed outright (SIGKILL)
 * could not remove its own.
 */
function removeStaleCgroups(root: string): void {
  for (const name of readdirSync(root)) {
    const owner = /^mcplex-(\d+)-\d+$/.exec(name)?.[1];
    if (owner === undefined || running(Number(owner))) continue;
    try {
      rmdirSync(join(root, name));
    } catch {}
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the proxy directories of mcplex processes that are gone (killed outright). */
function removeStaleProxyDirs(): void {
  for (const name of readdirSync(tmpdir())) {
    const owner = /^mcplex-proxy-(\d+)-/.exec(name)?.[1];
    if (owner !== undefined && !running(Number(owner)))
      rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

/**
 * Removes a server's pids cgroup once it is empty: bwrap's exit comes a moment before the
 * kernel has reaped what ran inside it (EBUSY until then), so it tries again for about a second.
 */
function removeCgroup(dir: string, tries: number): void {
  try {
    rmdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EBUSY" && tries > 1)
      setTimeout(() => removeCgroup(dir, tries - 1), 20).unref();
  }
}

/**
 * How the sandbox's two in-memory file systems share `memory`: /dev/shm gets a quarter, /tmp the
 * rest, so that together they hold no more than the limit (RLIMIT_DATA does not count them).
 */
export function memoryFileSystems(memory: number): { tmp: number; shm: number } {
  const shm = Math.floor(memory / 4);
  return { tmp: memory - shm, shm };
}

/** The real path of the config's folder, when there is one to hide. */
function hiddenFolder(configDir: string | undefined): string | undefined {
  if (configDir === undefined) return undefined;
  try {
    return realpathSync(configDir);
  } catch {
    return configDir;
  }
}

/**
 * Wraps a stdio server's launch in bubblewrap as `sandbox` says: all namespaces of its own (PID,
 * IPC, UTS, cgroup, user where unprivileged, and network unless `all`), a new session, no new
 * privileges, no capabilities, a seccomp filter (`seccomp-filter.ts`), dying with mcplex; the
 * system read-only, a minimal read-only /dev, its package read-only (not the config's folder,
 * `configDir`, unless `fs` lists it), a private /tmp (also its HOME) and /dev/shm, the configured
 * paths; limits set by prlimit before bwrap starts. Throws SANDBOX_UNAVAILABLE where bubblewrap
 * cannot run here.
 */
export function sandboxLaunch(
  params: {
    command: string;
    args: string[];
    env: Record<string, string>;
    cwd?: string;
    server?: string;
    configDir?: string;
  },
  sandbox: SandboxConfig,
): SandboxLaunch {
  const { bwrap, seccomp } = requireSandbox(params.server);
  const cwd = params.cwd ?? process.cwd();
  const hidden = hiddenFolder(params.configDir);
  const pkg = serverPackage(
    params.command,
    params.args,
    cwd,
    { PATH: process.env.PATH, ...params.env },
    {
      ...(params.server === undefined ? {} : { server: params.server }),
      ...(hidden === undefined ? {} : { hidden }),
    },
  );
  const sizes = memoryFileSystems(sandbox.memory);
  const args = [
    "--unshare-all",
    ...(sandbox.network === "all" ? ["--share-net"] : []),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    ...systemArgs(),
    "--proc",
    "/proc",
    // bwrap's minimal /dev (null, zero, full, random, urandom, tty, pts), read-only once /dev/shm
    // is mounted over it: nothing can be written there but to the devices themselves.
    "--dev",
    "/dev",
    // The private /tmp and /dev/shm live in memory that RLIMIT_DATA does not count: they share `memory`.
    "--perms",
    "1777",
    "--size",
    String(sizes.shm),
    "--tmpfs",
    "/dev/shm",
    "--remount-ro",
    "/dev",
    "--size",
    String(sizes.tmp),
    "--tmpfs",
    "/tmp",
    "--seccomp",
    String(SECCOMP_FD),
  ];
  for (const path of new Set(pkg.paths)) args.push("--ro-bind", path, path);
  for (const path of sandbox.fs.read) args.push("--ro-bind-try", path, path);
  for (const path of sandbox.fs.write) args.push("--bind-try", path, path);
  const visible = [...pkg.paths, ...sandbox.fs.read, ...sandbox.fs.write];
  const inside = visible.some((dir) => cwd === dir || cwd.startsWith(`${dir}/`));
  args.push("--chdir", inside ? cwd : "/tmp");
  const env: Record<string, string> = { HOME: "/tmp", TMPDIR: "/tmp", ...params.env };
  let proxy: Server | undefined;
  let proxyDir: string | undefined;
  let command = [pkg.command, ...pkg.args];
  if (Array.isArray(sandbox.network)) {
    removeStaleProxyDirs();
    proxyDir = mkdtempSync(join(tmpdir(), `mcplex-proxy-${process.pid}-`));
    writeFileSync(join(proxyDir, "forwarder.mjs"), FORWARDER);
    proxy = startFilterProxy(join(proxyDir, "proxy.sock"), sandbox.network);
    args.push("--ro-bind", proxyDir, PROXY_DIR);
    command = [
      process.execPath,
      `${PROXY_DIR}/forwarder.mjs`,
      `${PROXY_DIR}/proxy.sock`,
      String(PROXY_PORT),
      ...command,
    ];
    const url = `http://127.0.0.1:${PROXY_PORT}`;
    Object.assign(env, {
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      NO_PROXY: "",
      no_proxy: "",
      NODE_USE_ENV_PROXY: "1",
    });
    for (const dir of programDirs(process.execPath)) args.push("--ro-bind", dir, dir);
  }
  // bwrap's root is a tmpfs holding the mount points; read-only, so nothing lands beside them.
  args.push("--remount-ro", "/");
  const cgroup = pidsCgroup(sandbox.processes);
  const limits = [
    `--data=${sandbox.memory}`,
    `--nofile=${sandbox.files}`,
    `--nproc=${sandbox.processes + userTasks()}`,
  ];
  const wrapped = ["prlimit", ...limits, "--", bwrap, ...args, "--", ...command];
  let released = false;
  return {
    // With a cgroup, a shell puts itself in it and then becomes prlimit, bwrap and the server.
    command: cgroup === undefined ? "prlimit" : "/bin/sh",
    args:
      cgroup === undefined
        ? wrapped.slice(1)
        : ["-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, ...wrapped],
    env,
    seccomp,
    release() {
      if (released) return;
      released = true;
      proxy?.close();
      if (proxyDir !== undefined) rmSync(proxyDir, { recursive: true, force: true });
      if (cgroup !== undefined) removeCgroup(cgroup, 50);
    },
  };
}
