import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { configOf, fixture } from "../support/config.js";
import {
  COMMANDS,
  type InProcessGateway,
  rev2026Request,
  serveHttp,
  startGateway,
  yamlConfig,
} from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// The attack: one WebSocket pipelining 1,024 frames of 4 MB took the gateway to 4.65 GB, since
// /ws had no limit on requests in flight. It now has HTTP's per-client limit, per connection;
// a request past it is answered at once with an error saying so.

type Answer = { id?: unknown; method?: string; result?: unknown; error?: { code: number; message: string } };

/** Opens a raw MCP WebSocket and collects every answer (messages with an id and no method). */
async function openSocket(
  url: string,
): Promise<{ ws: WebSocket; answers: Answer[]; answered(n: number): Promise<void> }> {
  const ws = new WebSocket(url, "mcp");
  const answers: Answer[] = [];
  const waiters: Array<{ n: number; done: () => void }> = [];
  ws.on("message", (data) => {
    const message = JSON.parse(String(data)) as Answer;
    if (message.method !== undefined || message.id === undefined) return;
    answers.push(message);
    for (const w of waiters.filter((w) => answers.length >= w.n)) w.done();
  });
  await once(ws, "open");
  return {
    ws,
    answers,
    answered: (n) =>
      answers.length >= n ? Promise.resolve() : new Promise<void>((done) => waiters.push({ n, done })),
  };
}

/** Sends `message`, resolving once it is written to the socket (the client keeps no backlog). */
const send = (ws: WebSocket, message: unknown) =>
  new Promise<void>((done, fail) =>
    ws.send(JSON.stringify(message), (error) => (error ? fail(error) : done())),
  );

const slow = (id: number, tag = "") =>
  rev2026Request(id, "tools/call", { name: "fx__slow", arguments: { ms: 120_000, step: 120_000, tag } });

describe("a WebSocket pipelining requests", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(configOf([fixture("fx")]));
  });
  afterAll(() => gw?.stop());

  it("gets past the in-flight limit an immediate error naming it, and the slot back on cancel", async () => {
    const front = await gw.addFront({ maxConcurrent: 4 });
    const client = await openSocket(front.wsUrl);
    try {
      for (let id = 1; id <= 10; id++) await send(client.ws, slow(id));
      await client.answered(6);
      const refused = client.answers.slice(0, 6);
      expect(refused.map((a) => a.id)).toEqual([5, 6, 7, 8, 9, 10]);
      for (const answer of refused) {
        expect(answer.error?.message).toMatch(/too many requests in flight on this connection \(limit 4\)/);
      }
      // A cancelled request gets no answer, and gives its place back.
      await send(client.ws, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } });
      await send(
        client.ws,
        rev2026Request(11, "tools/call", { name: "fx__echo", arguments: { message: "in" } }),
      );
      await client.answered(7);
      expect(client.answers[6]).toMatchObject({ id: 11, result: { content: [{ text: "echo: in" }] } });
      expect(client.answers.some((a) => a.id === 1)).toBe(false);
    } finally {
      client.ws.terminate();
    }
  }, 30_000);
});

/** The peak resident set of a process so far, in bytes (Linux `VmHWM`). */
async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
}

describe("mcplex serve under a flood of large WebSocket frames", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-wsflood-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it(
    "keeps its memory bounded by the in-flight limit",
    async () => {
      const config = join(dir, "mcplex.yaml");
      await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }));
      const limit = 8;
      const served = await serveHttp(["--config", config, "--max-in-flight", String(limit)]);
      const frames = attackSize(64, 1024);
      const size = attackSize(1024 * 1024, 4 * 1024 * 1024 - 4096);
      try {
        const pid = served.child.pid!;
        const before = await peakRss(pid);
        const client = await openSocket(served.wsUrl);
        const tag = "x".repeat(size);
        for (let id = 1; id <= frames; id++) await send(client.ws, slow(id, tag));
        await client.answered(frames - limit);
        const growth = (await peakRss(pid)) - before;
        const refused = client.answers.filter((a) => /in flight/.test(a.error?.message ?? "")).length;
        reportFigure(
          "ws flood",
          `${frames} frames of ${(size / 2 ** 20).toFixed(1)} MiB, limit ${limit}: ${refused} refused, ` +
            `peak RSS growth ${(growth / 2 ** 20).toFixed(0)} MiB`,
        );
        expect(refused).toBe(frames - limit);
        // Each request in flight costs a few copies of its frame (text, parsed, the upstream's line).
        expect(growth).toBeLessThan(limit * size * 12 + 128 * 2 ** 20);
        client.ws.terminate();
      } finally {
        await served.stop();
      }
    },
    attackTimeout(90_000, 600_000),
  );
});
