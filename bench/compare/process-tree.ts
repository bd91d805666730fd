/**
 * What a target costs the machine, read from Linux /proc: its own processes (the process
 * started and its descendants, less the upstream echo server it spawns, and a shell it spawns
 * that server through, which every target shares), their CPU time and resident memory.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Command lines naming one of these are the upstream, not the target's own. */
const UPSTREAM = /echo-server\.mjs/;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined; // A process (or thread) that ended between the listing and the read.
  }
}

/** The children of every process, from each process's parent in /proc/<pid>/stat. */
function childrenByParent(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    if (stat === undefined) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  return children;
}

/**
 * The target's own processes: `root` (always, even when it is the echo server itself, as the
 * direct rows are) and its descendants whose command line does not name the upstream
 * (`withUpstream`: all its descendants).
 */
export function ownProcesses(root: number, options: { withUpstream?: boolean } = {}): number[] {
  const children = childrenByParent();
  const own = [root];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      const cmdline = read(`/proc/${child}/cmdline`) ?? "";
      if (options.withUpstream !== true && UPSTREAM.test(cmdline)) continue;
      own.push(child);
      walk(child);
    }
  };
  walk(root);
  return own;
}

/** CPU seconds the processes have used, from their threads' schedstat (ns on a CPU). */
export function cpuSeconds(pids: readonly number[]): number {
  let ns = 0;
  for (const pid of pids) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) ns += Number(read(`/proc/${pid}/task/${task}/schedstat`)?.split(" ")[0] ?? 0);
  }
  return ns / 1e9;
}

/** The processes' resident memory together (VmRSS summed), in MB. */
export function rssMb(pids: readonly number[]): number {
  let kb = 0;
  for (const pid of pids) kb += Number(/VmRSS:\s+(\d+)/.exec(read(`/proc/${pid}/status`) ?? "")?.[1] ?? 0);
  return kb / 1024;
}
