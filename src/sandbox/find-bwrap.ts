import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { McplexError } from "../errors.js";
import { seccompFilter } from "./seccomp-filter.js";

/** How a person gets bubblewrap, for the errors that need it. */
export const BWRAP_INSTALL_HINT =
  "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`), " +
  "or put a `bwrap` binary in the project's .tools/ or set MCPLEX_BWRAP to one";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where `bwrap` is: `MCPLEX_BWRAP`, else the first on PATH, else `.tools/bwrap` in the
 * working directory. `undefined` when there is none.
 */
export function findBwrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.MCPLEX_BWRAP !== undefined && env.MCPLEX_BWRAP !== "") return env.MCPLEX_BWRAP;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir !== "" && executable(join(dir, "bwrap"))) return join(dir, "bwrap");
  }
  const local = resolve(".tools", "bwrap");
  return executable(local) ? local : undefined;
}

/** Whether sandboxing works on this machine: the bwrap found and the seccomp program, or why not (with the fix). */
export type SandboxSupport = { ok: true; bwrap: string; seccomp: Buffer } | { ok: false; reason: string };

let cached: SandboxSupport | undefined;

/**
 * Runs a real, empty sandbox once (all namespaces, the read-only /dev with its /dev/shm and the
 * seccomp filter, as servers get them) and says whether it started. Cached for the process: the
 * kernel's answer does not change while mcplex runs.
 */
export function probeSandbox(options: { fresh?: boolean } = {}): SandboxSupport {
  if (cached !== undefined && options.fresh !== true) return cached;
  const bwrap = findBwrap();
  if (bwrap === undefined) {
    cached = { ok: false, reason: `bubblewrap (bwrap) was not found: ${BWRAP_INSTALL_HINT}` };
    return cached;
  }
  const filter = seccompFilter();
  if (!filter.ok) {
    cached = {
      ok: false,
      reason: `${filter.reason}, and a server does not run sandboxed without one; run it unsandboxed (\`sandbox: false\`) or on one of those`,
    };
    return cached;
  }
  // Through prlimit, as servers start: it is util-linux's, missing from some minimal images.
  // The filter comes on stdin (`--seccomp 0`), which `true` does not read.
  const run = spawnSync(
    "prlimit",
    [
      "--nofile=256",
      "--",
      bwrap,
      ...["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--new-session"],
      ...["--dev", "/dev", "--size", "1048576", "--tmpfs", "/dev/shm", "--remount-ro", "/dev"],
      ...["--seccomp", "0", "--", "true"],
    ],
    { encoding: "utf8", timeout: 10_000, input: filter.program },
  );
  const code = (run.error as NodeJS.ErrnoException | undefined)?.code;
  // EPIPE: bwrap exited before it read the filter, having failed first; its exit says why.
  const failedFirst = code === "EPIPE" && run.status !== null && run.status !== 0;
  if (code === "ENOENT") {
    cached = {
      ok: false,
      reason: "prlimit was not found: install util-linux (Debian/Ubuntu: `sudo apt-get install util-linux`)",
    };
  } else if (run.error !== undefined && !failedFirst) {
    cached = { ok: false, reason: `${bwrap} could not run (${run.error.message}): ${BWRAP_INSTALL_HINT}` };
  } else if (run.status !== 0) {
    const said = (run.stderr ?? "").trim().split("\n")[0] ?? "";
    cached = {
      ok: false,
      reason:
        `the kernel refused bubblewrap's namespaces (${said || `exit ${run.status}`}): unprivileged user ` +
        "namespaces are off here. Turn them on (`sudo sysctl -w kernel.unprivileged_userns_clone=1`; " +
        "on Ubuntu 23.10+ also `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` or an " +
        "AppArmor profile for bwrap; in a container, allow user namespaces in its seccomp profile), " +
        "or remove `sandbox:` from the config",
    };
  } else {
    cached = { ok: true, bwrap, seccomp: filter.program };
  }
  return cached;
}

/**
 * The bwrap to run a sandboxed server with and the seccomp program it loads; throws
 * SANDBOX_UNAVAILABLE saying why and how to fix it.
 */
export function requireSandbox(server: string | undefined): { bwrap: string; seccomp: Buffer } {
  const support = probeSandbox();
  if (support.ok) return support;
  throw new McplexError(
    "SANDBOX_UNAVAILABLE",
    `${server === undefined ? "" : `${server}: `}cannot start in a sandbox: ${support.reason}`,
    { ...(server === undefined ? {} : { server }), transport: "stdio" },
  );
}
