import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { configOf, fixture, stdio } from "../support/config.js";
import {
  type InProcessGateway,
  postRev2026,
  type RawResponse,
  rawHttp,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";

// The dashboard's server actions over plain HTTP: POST /dashboard/servers/<name>/<action>,
// against a gateway with real fixture upstreams, behind tokens and profiles, and servers
// under `available:` (started on request) that the dashboard starts and stops.

const ADMIN = "t-admin-0123456789ab";
const ECHO = "t-echo-0123456789abc";
const ONDEMAND = "t-ondemand-0123456789";
const admin = { authorization: `Bearer ${ADMIN}` };
const echo = { authorization: `Bearer ${ECHO}` };
const ondemand = { authorization: `Bearer ${ONDEMAND}` };
/** Actions are sent as JSON, as the page does: a type no other site can send without a preflight. */
const JSON_TYPE = { "content-type": "application/json" };

interface Status {
  name: string;
  state: string;
  enabled: boolean;
  pid?: number;
}

interface Available {
  name: string;
  connected: boolean;
  tools: number;
}

interface State {
  servers: Status[];
  available: Available[];
  tools: Array<{ name: string; server: string }>;
}

describe("server actions of the dashboard", { timeout: 60_000 }, () => {
  let gw: InProcessGateway;
  let home: string;
  const act = (server: string, action: string, headers: Record<string, string> = admin) =>
    rawHttp(`${gw.origin}/dashboard/servers/${encodeURIComponent(server)}/${action}`, {
      method: "POST",
      headers: { ...JSON_TYPE, ...headers },
    });
  const status = (name: string) => gw.hub.servers().find((s) => s.name === name) as Status;
  const state = async (headers: Record<string, string> = admin) => {
    const res = await rawHttp(`${gw.origin}/dashboard/state`, { method: "GET", headers });
    expect(res.status).toBe(200);
    return res.json as State;
  };
  const echoCall = (id: number) =>
    postRev2026(
      gw.url,
      rev2026Request(id, "tools/call", { name: "fx__echo", arguments: { message: "hi" } }),
      admin,
    );

  beforeAll(async () => {
    // The recorded tool lists of available servers go beside the secret store: a directory of the test's.
    home = mkdtempSync(join(tmpdir(), "mcplex-dashboard-actions-"));
    vi.stubEnv("MCPLEX_HOME", home);
    gw = await startGateway(
      configOf(
        [
          fixture("fx"),
          // Its own process: identical definitions would share one connection with fx.
          fixture("lazy", ["--modern-only"], { lazy: true }),
          stdio("broken", "/nonexistent/mcp-server", [], { lazy: true }),
        ],
        {
          available: [
            fixture("od", [], { env: { FIXTURE_ROLE: "on-demand" } }),
            stdio("gone", "/nonexistent/on-demand-server"),
          ],
          profiles: {
            echo: { tools: { allow: ["fx__echo"] } },
            ondemand: { servers: ["fx", "od"], tools: {} },
          },
          tokens: [
            { token: ADMIN },
            { token: ECHO, profile: "echo" },
            { token: ONDEMAND, profile: "ondemand" },
          ],
        },
      ),
    );
  });
  afterAll(async () => {
    await gw?.stop();
    vi.unstubAllEnvs();
    rmSync(home, { recursive: true, force: true });
  });

  it("wants the token in the Authorization header and never reads a cookie", async () => {
    const anonymous = await act("fx", "restart", {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers["www-authenticate"]).toMatch(/^Bearer/);
    const cookie = await act("fx", "restart", { cookie: `authorization=Bearer ${ADMIN}; token=${ADMIN}` });
    expect(cookie.status).toBe(401);
    const wrong = await act("fx", "restart", { authorization: "Bearer not-the-token" });
    expect(wrong.status).toBe(401);
    expect(wrong.body).not.toContain(ADMIN);
    expect(status("fx").state).toBe("ready");
  });

  it("counts against the caller's rate limit, as /mcp requests do", async () => {
    const front = await gw.addFront({
      tokens: [{ token: ADMIN }],
      rateLimit: { perSecond: 0.001, burst: 1 },
    });
    try {
      const origin = front.url.replace(/\/mcp$/, "");
      const post = () =>
        rawHttp(`${origin}/dashboard/servers/fx/enable`, {
          method: "POST",
          headers: { ...JSON_TYPE, ...admin },
        });
      expect((await post()).status).toBe(200);
      const limited = await post();
      expect(limited.status).toBe(429);
      expect(limited.headers["retry-after"]).toBeDefined();
      // Reading the state is not limited.
      const state = await rawHttp(`${origin}/dashboard/state`, { method: "GET", headers: admin });
      expect(state.status).toBe(200);
    } finally {
      await front.close();
    }
  });

  it("takes POST only", async () => {
    const get = await rawHttp(`${gw.origin}/dashboard/servers/fx/restart`, { method: "GET", headers: admin });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("POST");
  });

  it("refuses pages of other origins and foreign Host headers, as /mcp does", async () => {
    const pid = status("fx").pid;
    const foreign = await act("fx", "disable", { ...admin, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.json).toEqual({ error: expect.stringContaining("Origin not allowed") });
    const rebound = await act("fx", "disable", { ...admin, host: "evil.example" });
    expect(rebound.status).toBeGreaterThanOrEqual(400);
    expect(status("fx")).toMatchObject({ state: "ready", enabled: true, pid });
    // The dashboard's own origin is let in.
    const own = await act("fx", "restart", { ...admin, origin: gw.origin });
    expect(own.status).toBe(200);
  });

  it("restarts a server: a new process, ready again", async () => {
    const before = status("fx").pid;
    const res = await act("fx", "restart");
    expect(res.status).toBe(200);
    const body = res.json as { action: string; server: Status };
    expect(body.action).toBe("restart");
    expect(body.server).toMatchObject({ name: "fx", state: "ready" });
    expect(body.server.pid).toBeTypeOf("number");
    expect(body.server.pid).not.toBe(before);
    expect(resultOf(await echoCall(1))).toBe("echo: hi");
  });

  it("disables a server, which then refuses calls, and enables it again", async () => {
    const off = await act("fx", "disable");
    expect(off.status).toBe(200);
    expect((off.json as { server: Status }).server).toMatchObject({ state: "disabled", enabled: false });
    const refused = await echoCall(2);
    expect(JSON.stringify(refused.json)).toContain("disabled");
    const restart = await act("fx", "restart");
    expect(restart.status).toBe(409);
    expect(restart.json).toEqual({ error: 'server "fx" is disabled; enable it first' });

    const on = await act("fx", "enable");
    expect(on.status).toBe(200);
    expect((on.json as { server: Status }).server).toMatchObject({ state: "ready", enabled: true });
    expect(resultOf(await echoCall(3))).toBe("echo: hi");
  });

  it("starts a lazy server, and says why one does not start", async () => {
    expect(status("lazy").state).toBe("idle");
    const res = await act("lazy", "start");
    expect(res.status).toBe(200);
    expect((res.json as { server: Status }).server).toMatchObject({ name: "lazy", state: "ready" });

    const broken = await act("broken", "start");
    expect(broken.status).toBe(502);
    expect(broken.json).toMatchObject({
      error: expect.stringContaining('command "/nonexistent/mcp-server" was not found'),
      server: { name: "broken" },
    });
  });

  it("answers 404 for an unknown action or server", async () => {
    const action = await act("fx", "explode");
    expect(action.status).toBe(404);
    expect(action.json).toEqual({
      error: 'no such server action "explode"; use one of restart, start, stop, enable, disable, trust',
    });
    const server = await act("nope", "restart");
    expect(server.status).toBe(404);
    expect((server.json as { error: string }).error).toContain('unknown server "nope"');
    const stop = await act("nope", "stop");
    expect(stop.status).toBe(404);
    expect(stop.json).toEqual({ error: 'unknown server "nope"' });
  });

  it("lists the available servers a caller's profile may connect, none of them running", async () => {
    expect((await state()).available).toEqual([
      { name: "od", connected: false, tools: 0 },
      { name: "gone", connected: false, tools: 0 },
    ]);
    expect((await state(ondemand)).available).toEqual([{ name: "od", connected: false, tools: 0 }]);
    // Its tools.allow passes no tool of theirs (none recorded yet): the profile may connect neither.
    expect((await state(echo)).available).toEqual([]);
    expect(gw.hub.servers().map((s) => s.name)).toEqual(["fx", "lazy", "broken"]);
  });

  it("starts an available server, whose tools join the state, and stops it, keeping their count", async () => {
    const started = await act("od", "start");
    expect(started.status).toBe(200);
    expect((started.json as { server: Status }).server).toMatchObject({ name: "od", state: "ready" });
    const on = await state();
    const odTools = on.tools.filter((t) => t.server === "od").map((t) => t.name);
    expect(odTools).toContain("od__echo");
    expect(on.available[0]).toEqual({ name: "od", connected: true, tools: odTools.length });
    expect(on.servers.find((s) => s.name === "od")).toMatchObject({ state: "ready" });

    const stopped = await act("od", "stop");
    expect(stopped.status).toBe(200);
    expect(stopped.json).toEqual({
      action: "stop",
      server: { name: "od", connected: false, tools: odTools.length },
    });
    const off = await state();
    expect(off.tools.filter((t) => t.server === "od")).toEqual([]);
    expect(off.servers.map((s) => s.name)).not.toContain("od");
    // Its tools as recorded while it ran.
    expect(off.available[0]).toEqual({ name: "od", connected: false, tools: odTools.length });

    // Stopping it again leaves it stopped, as asked.
    const again = await act("od", "stop");
    expect(again.status).toBe(200);
    expect((again.json as { server: Available }).server.connected).toBe(false);
  });

  it("refuses to stop a server that is not under available:, pointing to disable", async () => {
    const res = await act("fx", "stop");
    expect(res.status).toBe(409);
    expect(res.json).toEqual({
      error:
        'stop is for servers under "available:" (started on request), and "fx" is not one; use disable to turn it off',
      hint: "POST /dashboard/servers/fx/disable",
    });
    expect(status("fx")).toMatchObject({ state: "ready", enabled: true });
  });

  it("answers 502 with the error when an available server does not start, leaving nothing behind", async () => {
    const res = await act("gone", "start");
    expect(res.status).toBe(502);
    expect((res.json as { error: string }).error).toContain(
      'command "/nonexistent/on-demand-server" was not found',
    );
    expect(gw.hub.servers().map((s) => s.name)).not.toContain("gone");
    expect((await state()).available).toContainEqual({ name: "gone", connected: false, tools: 0 });
  });

  it("lets a profile start and stop the available servers it may connect, and no other", async () => {
    const refused = await act("od", "start", echo);
    expect(refused.status).toBe(403);
    const unknown = await act("nope", "start", echo);
    expect(unknown.status).toBe(403);
    expect((refused.json as { error: string }).error).toBe(
      (unknown.json as { error: string }).error.replace('"nope"', '"od"'),
    );
    expect(gw.hub.servers().map((s) => s.name)).not.toContain("od");
    expect((await act("gone", "start", ondemand)).status).toBe(403);

    const started = await act("od", "start", ondemand);
    expect(started.status).toBe(200);
    expect((started.json as { server: Status }).server).toMatchObject({ name: "od", state: "ready" });
    expect((await state(ondemand)).tools.map((t) => t.name)).toContain("od__echo");
    // Connected, it is still not the echo profile's to stop.
    expect((await act("od", "stop", echo)).status).toBe(403);
    const stopped = await act("od", "stop", ondemand);
    expect(stopped.status).toBe(200);
    expect((await state(ondemand)).available).toEqual([
      { name: "od", connected: false, tools: expect.any(Number) },
    ]);
  });

  it("lets a profile-bound token act on its profile's servers only, with 403 otherwise", async () => {
    const outside = await act("lazy", "disable", echo);
    expect(outside.status).toBe(403);
    expect(outside.json).toEqual({
      error:
        'Forbidden: this token is bound to profile "echo", which has no server "lazy"; ' +
        "a profile-bound token acts only on its profile's servers",
    });
    expect(status("lazy").enabled).toBe(true);
    // An unknown name gets the same answer: the profile learns nothing of other servers.
    const unknown = await act("nope", "disable", echo);
    expect(unknown.status).toBe(403);
    expect((unknown.json as { error: string }).error).toBe(
      (outside.json as { error: string }).error.replace('"lazy"', '"nope"'),
    );

    const inside = await act("fx", "restart", echo);
    expect(inside.status).toBe(200);
    expect((inside.json as { server: Status }).server.state).toBe("ready");
  });
});

function resultOf(res: RawResponse): string {
  const result = (res.json as { result?: { content?: Array<{ text?: string }> } }).result;
  return (result?.content ?? []).map((c) => c.text ?? "").join("");
}

describe("server actions of a gateway without tokens (loopback only)", { timeout: 60_000 }, () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await startGateway(configOf([fixture("fx")]));
  });
  afterAll(() => gw?.stop());

  it("refuses a form another site posts, and serves the dashboard's own page and local tools", async () => {
    const url = `${gw.origin}/dashboard/servers/fx/disable`;
    const forged = await rawHttp(url, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
      body: "x=1",
    });
    expect(forged.status).toBe(403);
    expect(gw.hub.servers()[0]).toMatchObject({ enabled: true, state: "ready" });

    // Even from its own origin, an action a page could send without a preflight is refused.
    const plain = await rawHttp(url, {
      method: "POST",
      headers: { origin: gw.origin, "content-type": "text/plain" },
      body: "{}",
    });
    expect(plain.status).toBe(415);
    expect(plain.json).toEqual({ error: expect.stringContaining('"Content-Type: application/json"') });
    expect(gw.hub.servers()[0]).toMatchObject({ enabled: true, state: "ready" });

    const own = await rawHttp(url, { method: "POST", headers: { origin: gw.origin, ...JSON_TYPE } });
    expect(own.status).toBe(200);
    // A local tool sends no Origin at all, as curl does.
    const local = await rawHttp(`${gw.origin}/dashboard/servers/fx/enable`, {
      method: "POST",
      headers: JSON_TYPE,
    });
    expect(local.status).toBe(200);
    expect((local.json as { server: Status }).server).toMatchObject({ enabled: true, state: "ready" });
  });
});
