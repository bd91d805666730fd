import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FeedEvent } from "../../src/dashboard/call-feed.js";
import { configOf, fixture, stdio } from "../support/config.js";
import {
  eventually,
  type InProcessGateway,
  postRev2026,
  rawHttp,
  rev2026Request,
  slowCallUntilAborted,
  startGateway,
} from "../support/gateway.js";

// The dashboard's HTTP side: the page and its files, /dashboard/state, and the live event
// stream of calls, against a gateway with a real fixture upstream.

const SECRET = "s3cr3t-value-4711";

/** An open /dashboard/events stream: every batch's events as they come. */
interface EventStream {
  status: number;
  events: FeedEvent[];
  /** Resolves with the first event (already received or still to come) that matches. */
  next(match: (event: FeedEvent) => boolean): Promise<FeedEvent>;
  close(): void;
  /** Settles when the gateway ends the stream. */
  ended: Promise<void>;
}

function openEvents(origin: string, headers: Record<string, string> = {}): Promise<EventStream> {
  return new Promise((resolve, reject) => {
    const req = request(`${origin}/dashboard/events`, { headers }, (res) => {
      const events: FeedEvent[] = [];
      const waiters: Array<{ match: (e: FeedEvent) => boolean; resolve: (e: FeedEvent) => void }> = [];
      let buffer = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
          const data = buffer
            .slice(0, end)
            .split("\n")
            .filter((line) => line.startsWith("data: "))
            .map((line) => line.slice(6))
            .join("\n");
          buffer = buffer.slice(end + 2);
          if (data === "") continue;
          for (const event of (JSON.parse(data) as { events: FeedEvent[] }).events) {
            events.push(event);
            for (const w of [...waiters]) {
              if (!w.match(event)) continue;
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(event);
            }
          }
        }
      });
      const ended = new Promise<void>((done) => res.once("close", () => done()));
      resolve({
        status: res.statusCode ?? 0,
        events,
        next: (match) => {
          const seen = events.find(match);
          if (seen !== undefined) return Promise.resolve(seen);
          return new Promise((r) => waiters.push({ match, resolve: r }));
        },
        close: () => req.destroy(),
        ended,
      });
    });
    req.on("error", reject);
    req.end();
  });
}

const call = (url: string, id: number, name: string, args: Record<string, unknown> = {}, headers = {}) =>
  postRev2026(url, rev2026Request(id, "tools/call", { name, arguments: args }), headers);

interface State {
  servers: Array<{ name: string; state: string; error?: string; stats: { requests: number } }>;
  tools: Array<{ name: string; server: string; available: boolean }>;
  health: { status: string };
  gateway: { name: string; mcp: string; ws?: string; authenticated: boolean; profile?: string };
  calls: {
    active: Array<{ target?: string; server?: string }>;
    recent: Array<{ target?: string; server?: string; outcome: string; error?: string }>;
  };
}

describe("dashboard of a gateway with a fixture upstream and a broken one", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(
      configOf([fixture("fx"), stdio("broken", "/nonexistent/mcp-server")], { secrets: [SECRET] }),
    );
  });
  afterAll(() => gw?.stop());

  it("sends / to /dashboard and serves the page with a strict content security policy", async () => {
    const root = await rawHttp(`${gw.origin}/`, { method: "GET" });
    expect(root.status).toBe(302);
    expect(root.headers.location).toBe("/dashboard");
    const page = await rawHttp(`${gw.origin}/dashboard`, { method: "GET" });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    expect(page.body).toContain('src="/dashboard/app.js"');
    const script = await rawHttp(`${gw.origin}/dashboard/app.js`, { method: "GET" });
    expect(script.status).toBe(200);
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(script.body).toContain("/dashboard/events");
    const style = await rawHttp(`${gw.origin}/dashboard/app.css`, { method: "GET" });
    expect(style.headers["content-type"]).toBe("text/css; charset=utf-8");
  });

  it("refuses other methods, unknown dashboard paths and foreign Host headers", async () => {
    expect((await rawHttp(`${gw.origin}/dashboard/state`, { method: "POST", body: {} })).status).toBe(405);
    const unknown = await rawHttp(`${gw.origin}/dashboard/nope`, { method: "GET" });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({
      error: "no such endpoint /dashboard/nope; the dashboard is at /dashboard",
    });
    for (const path of ["/dashboard", "/dashboard/state", "/dashboard/events"]) {
      const rebound = await rawHttp(`${gw.origin}${path}`, {
        method: "GET",
        headers: { host: "evil.example" },
      });
      expect(rebound.status, path).toBeGreaterThanOrEqual(400);
      expect(rebound.body, path).not.toContain("fx__echo");
    }
    const foreign = await rawHttp(`${gw.origin}/dashboard/state`, {
      method: "GET",
      headers: { origin: "https://evil.example" },
    });
    expect(foreign.status).toBe(403);
  });

  it("reports servers with their errors, health, tools and endpoints in /dashboard/state", async () => {
    const res = await rawHttp(`${gw.origin}/dashboard/state`, { method: "GET" });
    expect(res.status).toBe(200);
    expect(res.headers["cache-control"]).toBe("no-store");
    const state = res.json as State;
    expect(state.health.status).toBe("degraded");
    expect(state.gateway).toMatchObject({ name: "mcplex", mcp: gw.url, ws: gw.wsUrl, authenticated: false });
    const byName = Object.fromEntries(state.servers.map((s) => [s.name, s]));
    expect(byName.fx?.state).toBe("ready");
    expect(["failed", "reconnecting"]).toContain(byName.broken?.state);
    expect(byName.broken?.error).toContain("/nonexistent/mcp-server");
    expect(state.tools).toContainEqual({
      name: "fx__echo",
      server: "fx",
      originalName: "echo",
      description: "Echoes its message",
      available: true,
    });
  });

  it("streams calls as they start and end, and lists them in the state", async () => {
    const stream = await openEvents(gw.origin);
    expect(stream.status).toBe(200);
    try {
      // A call that runs until the client gives up on it.
      const slow = slowCallUntilAborted(gw.url, 1);
      const started = await stream.next((e) => e.type === "call-started" && e.call.target === "fx__slow");
      expect(started).toMatchObject({
        call: { method: "tools/call", target: "fx__slow", server: "fx", protocolVersion: "2026-07-28" },
      });
      // While it runs, the state lists it as active.
      const during = (await rawHttp(`${gw.origin}/dashboard/state`, { method: "GET" })).json as State;
      expect(during.calls.active).toContainEqual(
        expect.objectContaining({ target: "fx__slow", server: "fx" }),
      );

      await call(gw.url, 2, "fx__fail");
      const failed = await stream.next((e) => e.type === "call-ended" && e.call.target === "fx__fail");
      expect(failed).toMatchObject({
        call: { outcome: "tool_error", server: "fx", error: "this tool failed on purpose" },
      });

      // An error message that repeats a configured secret shows it redacted.
      await call(gw.url, 3, `nope-${SECRET}`);
      const unknown = await stream.next(
        (e) => e.type === "call-ended" && e.call.target?.startsWith("nope") === true,
      );
      expect(unknown).toMatchObject({ call: { outcome: "error", error: "Unknown tool: nope-***" } });

      // The slow call is still running: it stays active until it ends.
      const now = (await rawHttp(`${gw.origin}/dashboard/state`, { method: "GET" })).json as State;
      expect(now.calls.active.map((c) => c.target)).toEqual(["fx__slow"]);
      expect(now.calls.recent.slice(0, 2).map((c) => c.outcome)).toEqual(["error", "tool_error"]);
      expect(JSON.stringify(now)).not.toContain(SECRET);
      expect(JSON.stringify(stream.events)).not.toContain(SECRET);

      // The client goes away: the call ends (cancelled) and leaves the active list.
      slow.giveUp();
      await expect(slow.answer).rejects.toThrow();
      const cancelled = await stream.next((e) => e.type === "call-ended" && e.call.target === "fx__slow");
      expect(cancelled.type === "call-ended" && cancelled.call.ms).toBeGreaterThan(0);
      const after = (await rawHttp(`${gw.origin}/dashboard/state`, { method: "GET" })).json as State;
      expect(after.calls.active).toEqual([]);
    } finally {
      stream.close();
    }
  });
});

describe("latency in the dashboard's state", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(
      configOf([fixture("fx"), fixture("other", ["--modern-only"])], {
        profiles: { echo: { tools: { allow: ["fx__echo"] } } },
        tokens: [{ token: "t-admin-0123456789ab" }, { token: "t-echo-0123456789abc", profile: "echo" }],
      }),
    );
  });
  afterAll(() => gw?.stop());

  it("has per-minute points for each server that answered calls, in the caller's view", async () => {
    const admin = { authorization: "Bearer t-admin-0123456789ab" };
    for (let id = 1; id <= 3; id++) await call(gw.url, id, "fx__echo", { message: `m${id}` }, admin);
    await call(gw.url, 4, "other__echo", { message: "x" }, admin);
    const latency = async (token: string) => {
      const state = (
        await rawHttp(`${gw.origin}/dashboard/state`, {
          method: "GET",
          headers: { authorization: `Bearer ${token}` },
        })
      ).json as {
        latency: {
          bucketMs: number;
          servers: Record<string, Array<{ at: number; calls: number; p50: number }>>;
        };
      };
      return state.latency;
    };
    // A call is counted when it ends, which the feed hears as the answer goes out.
    const all = await eventually(async () => {
      const l = await latency("t-admin-0123456789ab");
      const counted = (name: string) => (l.servers[name] ?? []).reduce((n, p) => n + p.calls, 0);
      return counted("fx") === 3 && counted("other") === 1 ? l : undefined;
    });
    expect(all.bucketMs).toBe(60_000);
    const [point] = all.servers.fx!.slice(-1);
    expect(point!.at % 60_000).toBe(0);
    expect(point!.p50).toBeGreaterThan(0);
    // A profile-bound token sees its profile's servers only.
    expect(Object.keys((await latency("t-echo-0123456789abc")).servers)).toEqual(["fx"]);
  });
});

describe("dashboard behind tokens and profiles", () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(
      configOf([fixture("fx")], {
        profiles: { echo: { tools: { allow: ["fx__echo"] } } },
        tokens: [{ token: "t-admin-0123456789ab" }, { token: "t-echo-0123456789abc", profile: "echo" }],
      }),
    );
  });
  afterAll(() => gw?.stop());

  it("serves the page without a token but its data only with one", async () => {
    expect((await rawHttp(`${gw.origin}/dashboard`, { method: "GET" })).status).toBe(200);
    const anonymous = await rawHttp(`${gw.origin}/dashboard/state`, { method: "GET" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["www-authenticate"]).toMatch(/^Bearer/);
    const wrong = await rawHttp(`${gw.origin}/dashboard/state`, {
      method: "GET",
      headers: { authorization: "Bearer not-a-token" },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).not.toContain("t-admin-0123456789ab");
    expect((await openEvents(gw.origin)).status).toBe(401);
  });

  it("shows a profile-bound token its profile's tools and calls only", async () => {
    const admin = { authorization: "Bearer t-admin-0123456789ab" };
    const echo = { authorization: "Bearer t-echo-0123456789abc" };
    const stream = await openEvents(gw.origin, echo);
    try {
      await call(gw.url, 1, "fx__fail", {}, admin);
      await call(gw.url, 2, "fx__echo", { message: "hi" }, echo);
      await stream.next((e) => e.type === "call-ended" && e.call.target === "fx__echo");
      const targets = stream.events.flatMap((e) => (e.type === "changed" ? [] : [e.call.target]));
      expect(targets).toEqual(["fx__echo", "fx__echo"]);
      const mine = (await rawHttp(`${gw.origin}/dashboard/state`, { method: "GET", headers: echo }))
        .json as State;
      expect(mine.gateway).toMatchObject({ authenticated: true, profile: "echo" });
      expect(mine.tools.map((t) => t.name)).toEqual(["fx__echo"]);
      expect(mine.calls.recent.map((c) => c.target)).toEqual(["fx__echo"]);
      const all = (await rawHttp(`${gw.origin}/dashboard/state`, { method: "GET", headers: admin }))
        .json as State;
      expect(all.tools.length).toBeGreaterThan(1);
      expect(all.calls.recent.map((c) => c.target)).toEqual(["fx__echo", "fx__fail"]);
    } finally {
      stream.close();
    }
  });

  it("ends open event streams when the front closes", async () => {
    const front = await gw.addFront({ tokens: [{ token: "t-admin-0123456789ab" }] });
    const origin = front.url.replace(/\/mcp$/, "");
    const stream = await openEvents(origin, { authorization: "Bearer t-admin-0123456789ab" });
    expect(stream.status).toBe(200);
    await front.close(1000);
    await stream.ended;
  });

  it("is absent when turned off", async () => {
    const front = await gw.addFront({ dashboard: false });
    expect(front.dashboardUrl).toBeUndefined();
    const origin = front.url.replace(/\/mcp$/, "");
    expect((await rawHttp(`${origin}/dashboard`, { method: "GET" })).status).toBe(404);
    await front.close();
  });
});
