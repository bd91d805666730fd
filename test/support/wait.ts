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

/** Resolves when the process is gone (polling `kill(pid, 0)` on a short interval), or rejects after `ms`. */
export async function processGone(pid: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) throw new Error(`process ${pid} still alive after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
