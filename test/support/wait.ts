/** Bounded waits on events: each names what it waited for when it fails. */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { Hub, HubEvent } from "../../src/hub/hub.js";

/** Resolves with the first hub event that matches, or rejects after `ms`. */
export function nextEvent<T extends HubEvent>(
  hub: Hub,
  match: (event: HubEvent) => event is T,
  ms?: number,
): Promise<T>;
export function nextEvent(hub: Hub, match: (event: HubEvent) => boolean, ms?: number): Promise<HubEvent>;
export function nextEvent(hub: Hub, match: (event: HubEvent) => boolean, ms = 15_000): Promise<HubEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching hub event within ${ms} ms`));
    }, ms);
    const off = hub.on((event) => {
      if (!match(event)) return;
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

/** Whether the process runs: it exists and is not a zombie waiting for its parent to reap it. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Resolves once the process is gone (or a zombie), or rejects after `ms`. */
export function processGone(pid: number, ms = 10_000): Promise<void> {
  return until(() => !alive(pid), ms, `process ${pid} to exit`);
}

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

/** Resolves once `file` holds the line `line` (a child process appends to it). */
export function fileHasLine(file: string, line: string, ms = 10_000): Promise<void> {
  return until(
    async () => (await readFile(file, "utf8").catch(() => "")).split("\n").includes(line),
    ms,
    `"${line}" in ${file}`,
  );
}
