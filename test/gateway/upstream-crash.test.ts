import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client, McpSubscription } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  COMMANDS,
  connectHttp,
  resultText,
  type ServeProcess,
  serveHttp,
  yamlConfig,
} from "../support/gateway.js";
import { processGone } from "../support/wait.js";

// An upstream killed with SIGKILL while a 2025 and a 2026 client are connected over HTTP.
// Both clients see the outage as list changes (the upstream's tools become unavailable, then
// available again), so the test waits on those notifications rather than on time; the hub's
// reconnect backoff starts at 1 s, which bounds how long it takes.

/** Counts a client's tools/list_changed notifications; waits for the n-th. */
class ChangeCounter {
  count = 0;
  readonly #waiters: Array<{ n: number; done: () => void }> = [];

  constructor(client: Client) {
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      this.count++;
      for (const w of this.#waiters.filter((w) => w.n <= this.count)) w.done();
    });
  }

  /** Resolves once `n` notifications have arrived in all. */
  reach(n: number): Promise<void> {
    if (this.count >= n) return Promise.resolve();
    return new Promise((done) => this.#waiters.push({ n, done }));
  }
}

let dir: string;
let gw: ServeProcess;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-gw-crash-"));
  const config = join(dir, "mcplex.yaml");
  await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }));
  gw = await serveHttp(["--config", config]);
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

const connect = (mode: "legacy" | "auto") => connectHttp(gw.url, { mode, name: `crash-${mode}` });

/** The outcome of a call as text: the result's text, or the error's message. */
async function outcome(client: Client, name: string): Promise<{ isError: boolean; text: string }> {
  try {
    const result = await client.callTool({ name, arguments: { message: "ping" } });
    return { isError: result.isError === true, text: resultText(result) };
  } catch (error) {
    return { isError: true, text: (error as Error).message };
  }
}

describe("an upstream killed with SIGKILL while clients are connected", () => {
  let legacy: Client;
  let rev2026: Client;
  let subscription: McpSubscription;
  let rev2025Changes: ChangeCounter;
  let rev2026Changes: ChangeCounter;
  beforeAll(async () => {
    legacy = await connect("legacy");
    rev2026 = await connect("auto");
    rev2025Changes = new ChangeCounter(legacy);
    rev2026Changes = new ChangeCounter(rev2026);
    subscription = await rev2026.listen({ toolsListChanged: true });
  });
  afterAll(async () => {
    await subscription?.close();
    await legacy?.close();
    await rev2026?.close();
  });

  it("fails calls with an error naming the server while it is down, and serves them again after it returns", async () => {
    for (const client of [legacy, rev2026]) {
      expect(await outcome(client, "fx__echo")).toEqual({ isError: false, text: "echo: ping" });
    }
    const pid = Number(resultText(await rev2026.callTool({ name: "fx__pid", arguments: {} })));
    const before = { rev2025: rev2025Changes.count, rev2026: rev2026Changes.count };

    process.kill(pid, "SIGKILL");
    await processGone(pid);
    // Down: the tools become unavailable, which both clients hear about.
    await Promise.all([rev2025Changes.reach(before.rev2025 + 1), rev2026Changes.reach(before.rev2026 + 1)]);
    for (const client of [legacy, rev2026]) {
      const down = await outcome(client, "fx__echo");
      expect(down.isError).toBe(true);
      expect(down.text).toMatch(/\bfx\b/);
      expect(down.text).toMatch(/next retry/);
    }

    // Back: announced again; the same clients, never reconnected, are served.
    await Promise.all([rev2025Changes.reach(before.rev2025 + 2), rev2026Changes.reach(before.rev2026 + 2)]);
    for (const client of [legacy, rev2026]) {
      expect(await outcome(client, "fx__echo")).toEqual({ isError: false, text: "echo: ping" });
    }
    const newPid = Number(resultText(await legacy.callTool({ name: "fx__pid", arguments: {} })));
    expect(newPid).not.toBe(pid);
    expect(gw.child.exitCode).toBeNull();
  });
});
