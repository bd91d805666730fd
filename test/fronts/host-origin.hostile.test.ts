import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHostAndOrigin, defaultGuardPolicy } from "../../src/fronts/http-guard.js";
import { configOf } from "../support/config.js";
import { type InProcessGateway, startGateway } from "../support/gateway.js";

// Host and Origin values a browser never sends, which the old prefix matching read as loopback
// (`localhost:8420@evil.com` as `localhost`, `http://[::1]evil.com` as `http://[::1]`). They are
// parsed as URLs now, and a value that does not parse, or does not read back as itself, is refused.

const local = defaultGuardPolicy("127.0.0.1", 8420);

/** Host, Origin, and the status: 200 passes the guard. */
const CASES: Array<[string, string | undefined, number]> = [
  ["localhost:8420", undefined, 200],
  ["127.0.0.1", "http://localhost:5173", 403],
  ["127.0.0.1:8420", "http://localhost:8420", 200],
  ["[::1]:8420", "http://[::1]:8420", 200],
  ["LocalHost:8420", "HTTP://LOCALHOST:8420", 200],
  ["localhost:8420@evil.com", undefined, 400],
  ["localhost@evil.com", undefined, 400],
  ["user:pass@localhost:8420", undefined, 400],
  ["localhost:8420/evil", undefined, 400],
  ["localhost:8420/", undefined, 400],
  ["localhost:8420?x", undefined, 400],
  ["localhost:8420#x", undefined, 400],
  ["localhost\\evil.com", undefined, 400],
  ["localhost:", undefined, 400],
  ["localhost:abc", undefined, 400],
  ["localhost:99999", undefined, 400],
  ["localhost:8420:1", undefined, 400],
  ["127.1", undefined, 400],
  ["[::1]evil.com", undefined, 400],
  ["[::1", undefined, 400],
  ["localhost:8420", "http://[::1]evil.com", 403],
  ["localhost:8420", "http://localhost:8420@evil.com", 403],
  ["localhost:8420", "http://localhost@evil.com", 403],
  ["localhost:8420", "http://localhost:8420/", 403],
  ["localhost:8420", "http://localhost/path", 403],
  ["localhost:8420", "http://localhost:", 403],
  ["localhost:8420", "http://localhost:abc", 403],
  ["localhost:8420", "http://127.1", 403],
  ["localhost:8420", "http://localhost.evil.com", 403],
  ["localhost:8420", "null", 403],
];

describe("checkHostAndOrigin with malformed values", () => {
  it.each(CASES)("Host %j with Origin %j → %i", (host, origin, status) => {
    const result = checkHostAndOrigin({ host, origin }, local);
    if (status === 200) expect(result).toEqual({ ok: true });
    else expect(result).toMatchObject({ ok: false, status });
  });

  it("matches configured entries exactly, port included", () => {
    const policy = defaultGuardPolicy("0.0.0.0", 8420, {
      allowedHosts: ["mcp.example.com:443"],
      allowedOrigins: ["https://app.example.com"],
    });
    const ok = (host: string, origin?: string) => checkHostAndOrigin({ host, origin }, policy).ok;
    expect(ok("mcp.example.com:443")).toBe(true);
    expect(ok("mcp.example.com:443@evil.com")).toBe(false);
    expect(ok("localhost:1", "https://app.example.com")).toBe(true);
    expect(ok("localhost:1", "https://app.example.com:443")).toBe(false); // browsers never write :443
    expect(ok("localhost:1", "https://app.example.com:8443")).toBe(false);
    expect(ok("localhost:1", "http://app.example.com")).toBe(false);
    expect(ok("localhost:1", "https://app.example.com@evil.com")).toBe(false);
  });
});

describe("Host and Origin on a real socket", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(configOf([]));
  });
  afterAll(() => gw?.stop());

  /** GET /healthz with these headers written as they are. */
  async function healthz(host: string, origin?: string): Promise<number> {
    const { port } = new URL(gw.url);
    const socket = connect(Number(port), "127.0.0.1");
    const lines = [`GET /healthz HTTP/1.1`, `Host: ${host}`, "Connection: close"];
    if (origin !== undefined) lines.push(`Origin: ${origin}`);
    socket.end(`${lines.join("\r\n")}\r\n\r\n`);
    let text = "";
    for await (const chunk of socket) text += String(chunk);
    return Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]);
  }

  it.each([
    ["localhost:PORT@evil.com", undefined, 400],
    ["localhost:PORT", "http://[::1]evil.com", 403],
    ["localhost:PORT", undefined, 200],
  ] as const)("Host %j with Origin %j → %i", async (host, origin, status) => {
    const port = new URL(gw.url).port;
    expect(await healthz(host.replace("PORT", port), origin)).toBe(status);
  });
});
