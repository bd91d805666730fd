/** Bounded waits on events for the transport contract: each names what it waited for when it fails. */
import { readFile } from "node:fs/promises";

/** Resolves with `promise`, or rejects naming `what` when it has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` on a short interval until it returns true; rejects after `ms`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether a process with this pid still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Resolves once the process is gone (`kill(pid, 0)` says ESRCH). */
export function processGone(pid: number, ms = 10_000): Promise<void> {
  return until(() => !alive(pid), ms, `process ${pid} to exit`);
}

/** Resolves once `file` holds the line `line` (a child process appends to it). */
export function fileHasLine(file: string, line: string, ms = 10_000): Promise<void> {
  return until(
    async () => (await readFile(file, "utf8").catch(() => "")).split("\n").includes(line),
    ms,
    `"${line}" in ${file}`,
  );
}
