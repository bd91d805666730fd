import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpFront } from "../../src/fronts/http-front.js";
import { runCli } from "../support/cli.js";
import { configOf, fixture } from "../support/config.js";
import {
  COMMANDS,
  type InProcessGateway,
  postRev2026,
  resultText,
  rev2026Headers,
  rev2026Request,
  serveHttp,
  startGateway,
  yamlConfig,
} from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// The attack: 300 connections declaring a body and sending it a byte a second held every call
// slot, and every other client got 429 for 75 s; 256 open `subscriptions/listen` streams held them
// the same way. Bodies are read under their own deadline before a call slot is taken, and
// streams have their own bound.

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await startGateway(configOf([fixture("fx")]));
});
afterAll(() => gw?.stop());

/** Sockets opened by a test, destroyed after it. */
const sockets: Socket[] = [];
afterAll(() => {
  for (const socket of sockets) socket.destroy();
});

/** Resolves once `front` has received `count` more requests (their headers parsed). */
function requestsSeen(front: HttpFront, count: number): Promise<void> {
  return new Promise((done) => {
    let seen = 0;
    const onRequest = () => {
      if (++seen < count) return;
      front.server.off("request", onRequest);
      done();
    };
    front.server.on("request", onRequest);
  });
}

/** A raw connection that declares a body of `declared` bytes and sends only its first byte. */
async function dribble(front: { url: string }, declared = 1000): Promise<Socket> {
  const { port } = new URL(front.url);
  const socket = connect(Number(port), "127.0.0.1");
  sockets.push(socket);
  socket.on("error", () => {});
  await once(socket, "connect");
  const headers = rev2026Headers({ method: "tools/list" });
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
  socket.write(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${lines.join("\r\n")}\r\ncontent-length: ${declared}\r\n\r\n{`,
  );
  return socket;
}

/** Everything a socket receives until the server closes it. */
async function untilClosed(socket: Socket): Promise<string> {
  let text = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  if (!socket.destroyed) await once(socket, "close");
  return text;
}

/** Opens a 2026 listen stream and resolves with its status once the answer's headers came. */
async function openListen(url: string, id: number, signal: AbortSignal): Promise<Response> {
  const listen = rev2026Request(id, "subscriptions/listen", { notifications: { toolsListChanged: true } });
  return fetch(url, {
    method: "POST",
    headers: rev2026Headers(listen),
    body: JSON.stringify(listen),
    signal,
  });
}

const echo = (id: number) =>
  rev2026Request(id, "tools/call", { name: "fx__echo", arguments: { message: `m${id}` } });

describe("slow bodies", () => {
  it(
    "do not hold call slots: a normal client's calls succeed while many bodies dribble in",
    async () => {
      const front = await gw.addFront({ maxConcurrent: 4, bodyTimeoutMs: 120_000 });
      const count = attackSize(40, 300);
      const seen = requestsSeen(front, count);
      await Promise.all(Array.from({ length: count }, () => dribble(front)));
      await seen;
      // One call after another: the normal client stays within its own limit of 4.
      const answers = [];
      for (let i = 0; i < 8; i++) answers.push(await postRev2026(front.url, echo(i)));
      const statuses = answers.map((a) => a.status);
      reportFigure(
        "slow bodies",
        `${count} dribbling connections; a normal client's 8 calls: ${statuses.join(" ")}`,
      );
      expect(statuses).toEqual(Array(8).fill(200));
      expect(resultText((answers[0]!.json as { result: unknown }).result)).toBe("echo: m0");
    },
    attackTimeout(60_000, 180_000),
  );

  it("are cut at the body deadline with 408 and a clear message", async () => {
    const front = await gw.addFront({ bodyTimeoutMs: 500 });
    const socket = await dribble(front);
    const answer = await untilClosed(socket);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toMatch(/request body did not arrive within 500 ms/);
    // The connection is closed, not kept for another request.
    expect(socket.destroyed || socket.readableEnded).toBe(true);
  }, 30_000);
});

describe("long-lived listen streams", () => {
  it("do not count against calls in flight", async () => {
    const front = await gw.addFront({ maxConcurrent: 4 });
    const abort = new AbortController();
    try {
      const streams = await Promise.all(
        Array.from({ length: 8 }, (_, i) => openListen(front.url, i, abort.signal)),
      );
      expect(streams.map((s) => s.status)).toEqual(Array(8).fill(200));
      const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => postRev2026(front.url, echo(i))));
      expect(answers.map((a) => a.status)).toEqual(Array(4).fill(200));
    } finally {
      abort.abort();
    }
  }, 30_000);

  it("have their own bound per client, refused beyond it with a clear 429", async () => {
    const front = await gw.addFront({ maxStreams: 3 });
    const abort = new AbortController();
    try {
      const streams = await Promise.all(
        Array.from({ length: 3 }, (_, i) => openListen(front.url, i, abort.signal)),
      );
      expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
      const refused = await openListen(front.url, 9, abort.signal);
      expect(refused.status).toBe(429);
      expect(await refused.text()).toMatch(/too many open streams.*limit 3/);
      // A stream that ends gives its place back.
      abort.abort();
      const again = new AbortController();
      const reopened = await (async () => {
        for (;;) {
          const res = await openListen(front.url, 10, again.signal);
          if (res.status === 200) return res;
          await res.text(); // the aborted streams' close may still be on its way
          await new Promise<void>((r) => setImmediate(r));
        }
      })();
      expect(reopened.status).toBe(200);
      again.abort();
    } finally {
      abort.abort();
    }
  }, 30_000);
});

describe("mcplex serve limit flags", () => {
  let dir: string;
  let config: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-limits-"));
    config = join(dir, "mcplex.yaml");
    await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("--body-timeout cuts a dribbled body with 408", async () => {
    const served = await serveHttp(["--config", config, "--body-timeout", "300ms", "--max-in-flight", "2"]);
    try {
      const answer = await untilClosed(await dribble(served));
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      expect(answer).toMatch(/within 300 ms/);
    } finally {
      await served.stop();
    }
  }, 60_000);

  it.each([
    ["--body-timeout", "soon"],
    ["--max-in-flight", "0"],
    ["--max-streams", "1.5"],
  ])("refuses %s %s, naming the flag and the expected form", async (flag, value) => {
    const result = await runCli(["serve", "--http", "--port", "0", "--config", config, flag, value], {
      timeout: 20_000,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${flag} must be`);
  });
});
