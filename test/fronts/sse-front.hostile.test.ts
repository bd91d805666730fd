import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpFront } from "../../src/fronts/http-front.js";
import { configOf, stdio } from "../support/config.js";
import { eventually, type InProcessGateway, rawHttp, startGateway } from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { openStream, sseSession } from "../support/sse-stream.js";

// Attacks on the HTTP+SSE transport: streams opened and dropped by the hundred, oversized
// messages, more requests in flight than the limit. Nothing may leak or lock a client out.

const REV2024 = resolve("test/fixtures/servers/rev2024-server.mjs");

let gw: InProcessGateway;
let small: HttpFront;
let smallOrigin: string;
beforeAll(async () => {
  gw = await startGateway(configOf([stdio("old", process.execPath, [REV2024])]));
  small = await gw.addFront({ maxBodyBytes: 2048, maxConcurrent: 2 });
  smallOrigin = small.url.replace(/\/mcp$/, "");
});
afterAll(async () => {
  await gw?.stop();
});

async function activeSessions(origin: string): Promise<number> {
  const metrics = (await rawHttp(`${origin}/metrics`, { method: "GET" })).body;
  const line = metrics.split("\n").find((l) => l.startsWith('mcplex_active_sessions{transport="http"}'));
  return Number(line?.split(" ").at(-1) ?? Number.NaN);
}

const call = (id: number, ms: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "old__wait", arguments: { ms } },
});

describe("the HTTP+SSE transport under attack", () => {
  it(
    "forgets every session of streams opened and dropped in bulk, and holds one client to --max-streams",
    async () => {
      const count = attackSize(50, 1000);
      const before = await activeSessions(gw.origin);
      const started = Date.now();
      const streams = await Promise.all(Array.from({ length: count }, () => openStream(`${gw.origin}/sse`)));
      const accepted = streams.filter((s) => s.status === 200);
      // One client (one address, no tokens) holds at most the default 64 streams; the rest get 429.
      expect(accepted).toHaveLength(Math.min(count, 64));
      expect(streams.filter((s) => s.status !== 200).every((s) => s.status === 429)).toBe(true);
      await Promise.all(accepted.map((s) => s.endpoint));
      expect(await activeSessions(gw.origin)).toBe(before + accepted.length);
      for (const stream of streams) stream.close();
      await eventually(async () => ((await activeSessions(gw.origin)) === before ? true : undefined), {
        ms: attackTimeout(20_000, 120_000),
        what: "every dropped stream's session closed",
      });
      reportFigure(
        "sse stream flood",
        `${count} streams opened at once: ${accepted.length} accepted, ${count - accepted.length} refused (429); all dropped and forgotten in ${Date.now() - started} ms`,
      );
    },
    attackTimeout(30_000, 180_000),
  );

  it("refuses an oversized message with 413 and keeps the session serving", async () => {
    const { stream, post } = await sseSession(smallOrigin, "2024-11-05");
    try {
      const big = {
        jsonrpc: "2.0",
        id: 1,
        method: "ping",
        params: { pad: "x".repeat(attackSize(4096, 1 << 20)) },
      };
      expect(await post(big)).toBe(413);
      expect(await post({ jsonrpc: "2.0", id: 2, method: "ping" })).toBe(202);
      expect((await stream.next()).id).toBe(2);
    } finally {
      stream.close();
    }
  });

  it("holds requests in flight to the limit (429 beyond) and frees each slot on its answer or cancellation", async () => {
    const { stream, post } = await sseSession(smallOrigin, "2024-11-05");
    const cancel = (requestId: number) =>
      post({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } });
    try {
      const rounds = attackSize(3, 50);
      for (let round = 0; round < rounds; round++) {
        const base = round * 10;
        // Two calls that would run a minute take both slots; a third is refused.
        expect(await post(call(base + 1, 60_000))).toBe(202);
        expect(await post(call(base + 2, 60_000))).toBe(202);
        expect(await post(call(base + 3, 0))).toBe(429);
        // Cancelled, they get no answer, and their slots are free again.
        expect(await cancel(base + 1)).toBe(202);
        expect(await cancel(base + 2)).toBe(202);
        expect(await post(call(base + 4, 0))).toBe(202);
        expect((await stream.next()).id).toBe(base + 4);
        // Answered, its slot is free: the next round takes both again.
      }
      reportFigure("sse concurrency", `${rounds} rounds at the limit, no slot lost`);
    } finally {
      stream.close();
    }
  });
});
