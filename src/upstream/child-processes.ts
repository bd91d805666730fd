import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";

/**
 * The stdio servers this process has started, each the leader of a process group of its
 * own (spawned `detached`), so that a signal reaches what it started too (`npx` -> `node`).
 * Whatever way this process ends, it takes them down: at once on request
 * ({@link terminateChildren}, {@link killChildren}), with SIGKILL on exit, and through a
 * watchdog when it is killed with SIGKILL itself (Node cannot set PR_SET_PDEATHSIG).
 */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Sends `signal` to the child's process group, or to the child alone where it has none. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  if (process.platform !== "win32") {
    try {
      process.kill(-child.pid, signal);
      return;
    } catch {
      // The group is gone (all of it exited), or never formed: the child alone then.
    }
  }
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}

/** Records a started child until it exits; its stragglers die with it. */
export function trackChild(child: ChildProcess): void {
  installExitHook();
  live.add(child);
  const pid = child.pid;
  if (pid !== undefined) tellWatchdog(`+${pid}`);
  child.once("exit", () => {
    live.delete(child);
    if (pid !== undefined) tellWatchdog(`-${pid}`);
    // A server's helpers are nobody's once it has gone, and may hold its pipes open.
    signalGroup(child, "SIGKILL");
  });
}

/**
 * Asks every child to stop now: ends its stdin and sends SIGTERM to its group, then
 * SIGKILL to the groups still there after `graceMs`. Resolves when all have exited.
 */
export function terminateChildren(graceMs: number): Promise<void> {
  const children = [...live];
  const exits = children.map(exited);
  for (const child of children) {
    child.stdin?.end();
    signalGroup(child, "SIGTERM");
  }
  const timer = setTimeout(killChildren, graceMs);
  timer.unref();
  return Promise.all(exits).then(() => clearTimeout(timer));
}

/** SIGKILL to every child's group, at once. */
export function killChildren(): void {
  for (const child of live) signalGroup(child, "SIGKILL");
}

/** Resolves when the child has exited (not when its pipes close: a grandchild may hold them). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous last resort: whatever way this process ends, its servers end too.
  process.on("exit", killChildren);
}

/**
 * A shell in a session of its own, reading the process groups to guard on its stdin (`+PID`,
 * `-PID`); when its stdin ends, which happens however this process ends, SIGKILL included,
 * it kills the groups still listed. A Ctrl-C in the terminal does not reach it.
 */
const WATCHDOG = `groups=" "
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups\${line#+} " ;;
    -*) groups=$(printf '%s' "$groups" | sed "s/ \${line#-} / /") ;;
  esac
done
for g in $groups; do kill -9 "-$g" 2>/dev/null; done`;

let watchdog: ChildProcess | undefined;

function tellWatchdog(line: string): void {
  if (process.platform === "win32") return;
  if (watchdog === undefined) {
    const dog = spawn("/bin/sh", ["-c", WATCHDOG], { detached: true, stdio: ["pipe", "ignore", "ignore"] });
    // Neither it nor its pipe keeps this process running.
    dog.unref();
    (dog.stdin as Socket | null)?.unref?.();
    dog.on("error", () => {
      // No shell: the exit hook remains.
    });
    dog.stdin?.on("error", () => {});
    watchdog = dog;
  }
  if (watchdog.stdin?.writable === true) watchdog.stdin.write(`${line}\n`);
}
