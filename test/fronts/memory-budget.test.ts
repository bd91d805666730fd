import { once } from "node:events";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ByteBudget, SMALL_MESSAGE_BYTES } from "../../src/fronts/memory-budget.js";
import { configOf, fixture } from "../support/config.js";
import {
  type InProcessGateway,
  postRev2026,
  rawHttp,
  resultText,
  rev2026Headers,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";
import { sseSession } from "../support/sse-stream.js";

// The memory budget on every front: refused past it with a clear error (503 and Retry-After on
// HTTP), small requests still pass, and every share goes back once a request is answered.

const KIB = 1024;

describe("ByteBudget", () => {
  it("takes large messages up to its limit and small ones into a reserve past it", () => {
    const budget = new ByteBudget(1024 * KIB);
    const first = budget.reserve(800 * KIB)!;
    expect(budget.reserve(300 * KIB)).toBeUndefined();
    const small = budget.reserve(SMALL_MESSAGE_BYTES)!;
    expect(small).toBeDefined();
    expect(budget.used).toBe(800 * KIB + SMALL_MESSAGE_BYTES);
    first.release();
    first.release();
    small.release();
    expect(budget.used).toBe(0);
  });

  it("always takes a message alone, however large, and grows or charges a lease", () => {
    const budget = new ByteBudget(1024 * KIB);
    const alone = budget.reserve(4096 * KIB)!;
    expect(alone).toBeDefined();
    expect(alone.grow(KIB)).toBe(true);
    // Over the budget, nothing else fits, small or large.
    expect(budget.reserve(0)).toBeUndefined();
    alone.release();
    const first = budget.reserve(900 * KIB)!;
    const other = budget.reserve(0)!;
    // A body growing past the small size must fit the budget itself; a charge always does.
    expect(other.grow(200 * KIB)).toBe(false);
    other.charge(200 * KIB);
    expect(other.bytes).toBe(200 * KIB);
    first.release();
    other.release();
    expect(budget.used).toBe(0);
    // A released lease holds nothing more.
    other.charge(100);
    expect(budget.used).toBe(0);
  });
});

const echo = (id: number | string, message: string) =>
  rev2026Request(id, "tools/call", { name: "fx__echo", arguments: { message } });

/** POSTs `message` in chunks without Content-Length; resolves with the status and body. */
function postChunked(
  url: string,
  message: ReturnType<typeof echo>,
): Promise<{ status: number; body: string; retryAfter?: string }> {
  const text = JSON.stringify(message);
  return new Promise((done, fail) => {
    const req = request(
      url,
      { method: "POST", headers: { ...rev2026Headers(message), "transfer-encoding": "chunked" } },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (c: string) => (body += c));
        res.on("end", () =>
          done({
            status: res.statusCode ?? 0,
            body,
            ...(res.headers["retry-after"] === undefined
              ? {}
              : { retryAfter: String(res.headers["retry-after"]) }),
          }),
        );
      },
    );
    req.on("error", fail);
    for (let i = 0; i < text.length; i += 16 * KIB) req.write(text.slice(i, i + 16 * KIB));
    req.end();
  });
}

describe("the memory budget on the HTTP fronts", () => {
  let gw: InProcessGateway;
  const budget = new ByteBudget(1024 * KIB);
  beforeAll(async () => {
    gw = await startGateway(configOf([fixture("fx")]), { memoryBudget: budget });
  });
  afterAll(() => gw?.stop());

  it("refuses a large POST with 503, Retry-After and a JSON-RPC error while the budget is held; a small one passes", async () => {
    const held = budget.reserve(900 * KIB)!;
    try {
      const large = await postRev2026(gw.url, echo(1, "x".repeat(200 * KIB)));
      expect(large.status).toBe(503);
      expect(large.headers["retry-after"]).toBe("1");
      expect((large.json as { error: { message: string } }).error.message).toMatch(
        /memory budget \(1 MiB\) is held by requests in flight; retry in 1 s/,
      );
      const small = await postRev2026(gw.url, echo(2, "small"));
      expect(small.status).toBe(200);
      expect(resultText((small.json as { result: unknown }).result)).toBe("echo: small");
    } finally {
      held.release();
    }
    const large = await postRev2026(gw.url, echo(3, "x".repeat(200 * KIB)));
    expect(large.status).toBe(200);
    expect(budget.used).toBe(0);
    const metrics = (await rawHttp(`${gw.origin}/metrics`, { method: "GET" })).body;
    expect(metrics).toMatch(/^mcplex_memory_budget_bytes\{state="limit"\} 1048576$/m);
    expect(metrics).toMatch(/^mcplex_limit_refusals_total\{limit="memory-budget"\} [1-9]/m);
  });

  it("refuses a body without Content-Length once it grows past the budget", async () => {
    const held = budget.reserve(900 * KIB)!;
    try {
      const refused = await postChunked(gw.url, echo(4, "y".repeat(300 * KIB)));
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe("1");
      expect(refused.body).toMatch(/memory budget/);
      const small = await postChunked(gw.url, echo(5, "small"));
      expect(small.status).toBe(200);
    } finally {
      held.release();
    }
    expect(budget.used).toBe(0);
  });

  it("on /ws answers a large request past the budget with an error at once, and a small one", async () => {
    const ws = new WebSocket(gw.wsUrl, "mcp");
    const answers: Array<{ id: unknown; result?: unknown; error?: { message: string } }> = [];
    ws.on("message", (data) => answers.push(JSON.parse(String(data))));
    await once(ws, "open");
    const held = budget.reserve(900 * KIB)!;
    try {
      ws.send(JSON.stringify(echo("big", "z".repeat(200 * KIB))));
      ws.send(JSON.stringify(echo("small", "small")));
      await new Promise<void>((done) => {
        const check = () => (answers.length >= 2 ? done() : ws.once("message", check));
        check();
      });
      const big = answers.find((a) => a.id === "big")!;
      expect(big.error?.message).toMatch(/memory budget \(1 MiB\)/);
      expect(resultText(answers.find((a) => a.id === "small")!.result)).toBe("echo: small");
    } finally {
      held.release();
      ws.close();
    }
    await once(ws, "close");
    expect(budget.used).toBe(0);
  });

  it("on /messages (HTTP+SSE) refuses a large message with 503 and gives every share back", async () => {
    const { stream, post } = await sseSession(gw.origin, "2025-06-18");
    try {
      const held = budget.reserve(900 * KIB)!;
      try {
        expect(await post(echoLegacy(7, "w".repeat(200 * KIB)))).toBe(503);
        expect(await post(echoLegacy(8, "small"))).toBe(202);
        expect(resultText((await stream.next()).result)).toBe("echo: small");
      } finally {
        held.release();
      }
      expect(await post(echoLegacy(9, "w".repeat(200 * KIB)))).toBe(202);
      expect(resultText((await stream.next()).result)).toBe(`echo: ${"w".repeat(200 * KIB)}`);
      expect(budget.used).toBe(0);
    } finally {
      stream.close();
    }
  });
});

/** A 2025 `tools/call` of the fixture's echo. */
const echoLegacy = (id: number, message: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "fx__echo", arguments: { message } },
});
