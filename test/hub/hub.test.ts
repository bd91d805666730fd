import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { EXPOSED_NAME_PATTERN } from "../../src/catalog/tool-naming.js";
import { type McplexError, NotFoundError, UpstreamUnavailableError } from "../../src/errors.js";
import { Hub, type HubEvent } from "../../src/hub/hub.js";
import { applyConfig } from "../../src/servers/config-reloader.js";
import { configOf, EVERYTHING, fixture, MEMORY, remote, stdio } from "../support/config.js";
import { nextEvent, processGone } from "../support/wait.js";

const hubs: Hub[] = [];
function track(hub: Hub): Hub {
  hubs.push(hub);
  return hub;
}
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-hub-"));
  return () => rm(dir, { recursive: true, force: true });
});

/** A loopback port nobody listens on. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function text(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("");
}

describe("Hub with real servers", () => {
  it("starts several servers concurrently and merges their tools under LLM-safe names", async () => {
    const hub = track(
      new Hub({
        config: configOf([
          stdio("everything", EVERYTHING, ["stdio"]),
          stdio("memory", MEMORY, [], { env: { MEMORY_FILE_PATH: join(dir, "memory.json") } } as never),
          fixture("modern"),
          fixture("legacy", ["--legacy-only"]),
        ]),
      }),
    );
    await hub.start();
    const servers = Object.fromEntries(hub.servers().map((s) => [s.name, s]));
    expect(servers.everything?.state).toBe("ready");
    expect(servers.memory?.state).toBe("ready");
    expect(servers.modern?.protocolVersion).toBe("2026-07-28");
    expect(servers.legacy?.protocolVersion).toBe("2025-11-25");
    expect(servers.everything?.protocolVersion).toMatch(/^2025-/);

    const names = hub.tools().map((t) => t.name);
    expect(names).toContain("everything__echo");
    expect(names).toContain("memory__create_entities");
    expect(names).toContain("modern__echo");
    for (const name of names) expect(name).toMatch(EXPOSED_NAME_PATTERN);

    expect(text(await hub.callTool("everything__echo", { message: "hi" }))).toBe("Echo: hi");
    expect(text(await hub.callTool("modern__echo", { message: "2026" }))).toBe("echo: 2026");
    expect(text(await hub.callTool("legacy__echo", { message: "2025" }))).toBe("echo: 2025");
    const created = await hub.callTool("memory__create_entities", {
      entities: [{ name: "mcplex", entityType: "project", observations: ["built in TypeScript"] }],
    });
    expect(created.isError).not.toBe(true);
    const graph = await hub.callTool("memory__read_graph", {});
    expect(text(graph)).toContain("built in TypeScript");
  });

  it("reports each failing server with its reason and never holds back the others", async () => {
    const port = await deadPort();
    const events: HubEvent[] = [];
    const hub = track(
      new Hub({
        config: configOf([
          fixture("good"),
          stdio("missing", "mcplex-no-such-command"),
          fixture("exits", ["--exit-at-start", "4"]),
          remote("refused", `http://127.0.0.1:${port}/mcp`),
          // Long enough for the TypeScript fixture to start on a loaded machine (beside Chromium
          // and the conformance clients it took more than 1.5 s once).
          stdio("silent", process.execPath, ["-e", "setInterval(() => {}, 1000)"], { startTimeout: 6000 }),
        ]),
        // Retries must not begin before the slowest failure is in, or states move on under the asserts.
        backoff: { initial: 60_000 },
      }),
    );
    hub.on((e) => events.push(e));
    await hub.start();
    const servers = Object.fromEntries(hub.servers().map((s) => [s.name, s]));
    expect(servers.good?.state).toBe("ready");
    expect(servers.missing?.state).toBe("failed");
    expect(servers.missing?.error).toMatch(/mcplex-no-such-command.*not found/);
    expect(servers.exits?.state).toBe("failed");
    expect(servers.exits?.error).toMatch(/exited with code 4/);
    expect(servers.exits?.error).toContain("fixture: refusing to start (asked to)");
    expect(servers.refused?.error).toMatch(/ECONNREFUSED/);
    expect(servers.silent?.error).toMatch(/did not finish starting within 6000 ms/);
    // The good server was ready before the slow failure was even decided.
    const order = events
      .filter((e) => e.type === "server-state" && e.state !== "starting")
      .map((e) => (e as { server: string }).server);
    expect(order.indexOf("good")).toBeLessThan(order.indexOf("silent"));
    // Retryable failures have a next retry time; a missing command does not.
    expect(servers.exits?.retryAt).toBeGreaterThan(Date.now() - 1000);
    expect(servers.missing?.retryAt).toBeUndefined();
    expect(text(await hub.callTool("good__echo", { message: "still fine" }))).toBe("echo: still fine");
  });

  it("reconnects after the server is killed with SIGKILL and its tools work again", async () => {
    const hub = track(new Hub({ config: configOf([fixture("fx")]), backoff: { initial: 200, max: 400 } }));
    await hub.start();
    const pid = Number(text(await hub.callTool("fx__pid", {})));
    const down = nextEvent(hub, (e) => e.type === "server-state" && e.state === "reconnecting");
    process.kill(pid, "SIGKILL");
    await down;

    const error = await hub.callTool("fx__echo", { message: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as UpstreamUnavailableError).server).toBe("fx");
    expect((error as UpstreamUnavailableError).message).toMatch(
      /server "fx" is reconnecting.*next retry in \d+ s/,
    );
    expect(hub.tools().find((t) => t.name === "fx__echo")?.available).toBe(false);

    await nextEvent(hub, (e) => e.type === "server-state" && e.state === "ready");
    expect(text(await hub.callTool("fx__echo", { message: "back" }))).toBe("echo: back");
    expect(Number(text(await hub.callTool("fx__pid", {})))).not.toBe(pid);
    expect(hub.tools().find((t) => t.name === "fx__echo")?.available).toBe(true);
  });

  it("calls a tool whose original name is 100 characters with dots", async () => {
    const hub = track(new Hub({ config: configOf([fixture("fx")]) }));
    await hub.start();
    const tool = hub.tools().find((t) => t.originalName.length === 100);
    expect(tool).toBeDefined();
    expect(tool!.originalName).toContain(".");
    expect(tool!.name).toMatch(EXPOSED_NAME_PATTERN);
    expect(text(await hub.callTool(tool!.name, {}))).toBe("long name ok");
  });

  it("refreshes the catalog when a server announces tools/list_changed", async () => {
    const hub = track(new Hub({ config: configOf([fixture("fx", ["--legacy-only"])]) }));
    await hub.start();
    expect(hub.catalog.resolveTool("fx__extra_1")).toBeUndefined();
    const changed = nextEvent(
      hub,
      (e) => e.type === "catalog-changed" && hub.catalog.resolveTool("fx__extra_1") !== undefined,
    );
    await hub.callTool("fx__add_tool", {});
    await changed;
    expect(text(await hub.callTool("fx__extra_1", {}))).toBe("extra_1");
  });

  it("re-lists a server whose list results have passed their ttlMs, when the catalog is read", async () => {
    const hub = track(
      new Hub({
        config: configOf([stdio("ttl", process.execPath, ["test/fixtures/servers/ttl-server.mjs"])]),
      }),
    );
    await hub.start();
    expect(hub.servers()[0]?.protocolVersion).toBe("2026-07-28");
    expect(hub.tools().map((t) => t.name)).toEqual(["ttl__t1"]);
    // The server announces nothing: only reading the catalog after 300 ms re-lists it.
    // Bounded polling, since the trigger is a read after time passes.
    const deadline = Date.now() + 10_000;
    while (!hub.tools().some((t) => t.name === "ttl__t2") && Date.now() < deadline) {
      await nextEvent(hub, (e) => e.type === "catalog-changed", 1000).catch(() => undefined);
    }
    expect(hub.tools().map((t) => t.name)).toContain("ttl__t2");
  });

  it("shares one connection between identical server definitions", async () => {
    const hub = track(new Hub({ config: configOf([fixture("a"), fixture("b")]) }));
    await hub.start();
    const [a, b] = hub.servers();
    expect(a?.state).toBe("ready");
    expect(b?.state).toBe("ready");
    expect(a?.pid).toBe(b?.pid);
    expect(text(await hub.callTool("a__pid", {}))).toBe(text(await hub.callTool("b__pid", {})));
  });

  it("gives identical definitions whose connection settings differ a connection each", async () => {
    const hub = track(
      new Hub({
        config: configOf([
          fixture("a"),
          fixture("b", [], { idleTimeout: 60_000 }),
          fixture("c", [], { idleTimeout: 60_000 }),
          fixture("d", [], { startTimeout: 25_000 }),
        ]),
      }),
    );
    await hub.start();
    const pid = (name: string) => hub.servers().find((s) => s.name === name)!.pid;
    // b and c agree with each other, so they still share; a and d each differ from the rest.
    expect(pid("b")).toBe(pid("c"));
    expect(new Set([pid("a"), pid("b"), pid("d")]).size).toBe(3);
  });

  it("starts a lazy server on first use", async () => {
    const hub = track(new Hub({ config: configOf([fixture("lazy", [], { lazy: true })]) }));
    await hub.start();
    expect(hub.servers()[0]?.state).toBe("idle");
    // Its tools are unknown until it runs, so a lazy server is started by name.
    await hub.startServer("lazy");
    expect(text(await hub.callTool("lazy__echo", { message: "woke" }))).toBe("echo: woke");
  });

  it("stops child processes on close", async () => {
    const hub = new Hub({ config: configOf([fixture("fx"), stdio("everything", EVERYTHING, ["stdio"])]) });
    await hub.start();
    const pids = hub.servers().map((s) => s.pid!);
    expect(pids.every((p) => p > 0)).toBe(true);
    await hub.close();
    await hub.close(); // safe twice
    await Promise.all(pids.map((p) => processGone(p)));
    expect(hub.servers().every((s) => s.state === "stopped")).toBe(true);
  });

  it("adds and removes servers at run time", async () => {
    const hub = track(new Hub({ config: configOf([fixture("one")]) }));
    await hub.start();
    const added = nextEvent(
      hub,
      (e) =>
        e.type === "catalog-changed" &&
        e.servers.includes("two") &&
        hub.catalog.resolveTool("two__echo") !== undefined,
    );
    await hub.addServer(fixture("two", ["--legacy-only"]));
    await added;
    expect(text(await hub.callTool("two__echo", { message: "new" }))).toBe("echo: new");
    await expect(hub.addServer(fixture("two"))).rejects.toThrow(/already exists/);
    await hub.removeServer("two");
    await expect(hub.callTool("two__echo", { message: "gone" })).rejects.toBeInstanceOf(NotFoundError);
    expect(text(await hub.callTool("one__echo", { message: "kept" }))).toBe("echo: kept");
  });

  it("views the catalog through profiles", async () => {
    const hub = track(
      new Hub({
        config: configOf([fixture("fx"), stdio("everything", EVERYTHING, ["stdio"])], {
          profiles: {
            alice: { servers: ["fx"], tools: { allow: ["fx__echo", "fx__pid"] } },
            bob: { tools: { deny: ["fx__*"] } },
          },
        }),
      }),
    );
    await hub.start();
    expect(
      hub
        .tools("alice")
        .map((t) => t.name)
        .sort(),
    ).toEqual(["fx__echo", "fx__pid"]);
    expect(hub.tools("bob").every((t) => t.server === "everything")).toBe(true);
    expect(text(await hub.callTool("fx__echo", { message: "a" }, { profile: "alice" }))).toBe("echo: a");
    const denied = await hub
      .callTool("fx__echo", { message: "b" }, { profile: "bob" })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(NotFoundError);
    expect((denied as Error).message).toContain('in profile "bob"');
    expect(() => hub.tools("nobody")).toThrow(/nobody/);
  });
});

describe("server-to-client requests", () => {
  const answer = { action: "accept", content: { name: "Ada" } };

  it("reach the hub handler from a 2025 server and from a 2026 input_required result", async () => {
    const seen: string[] = [];
    const hub = track(
      new Hub({
        config: configOf([fixture("legacy", ["--legacy-only"]), fixture("modern", ["--modern-only"])]),
        onServerRequest: async (request) => {
          seen.push(`${request.server}:${request.method}`);
          return answer;
        },
      }),
    );
    await hub.start();
    expect(text(await hub.callTool("legacy__ask_name", {}))).toBe("hello Ada");
    expect(text(await hub.callTool("modern__ask_name", {}))).toBe("hello Ada");
    expect(seen).toEqual(["legacy:elicitation/create", "modern:elicitation/create"]);
  });

  it("prefer the handler given with the call", async () => {
    const hub = track(
      new Hub({
        config: configOf([fixture("legacy", ["--legacy-only"])]),
        onServerRequest: async () => ({ action: "accept", content: { name: "hub" } }),
      }),
    );
    await hub.start();
    const result = await hub.callTool(
      "legacy__ask_name",
      {},
      {
        onServerRequest: async () => ({ action: "accept", content: { name: "call" } }),
      },
    );
    expect(text(result)).toBe("hello call");
  });

  it("are declined with a clear error when nobody can answer, never left hanging", async () => {
    const hub = track(
      new Hub({
        config: configOf([fixture("legacy", ["--legacy-only"]), fixture("modern", ["--modern-only"])]),
      }),
    );
    await hub.start();
    for (const name of ["legacy__ask_name", "modern__ask_name"]) {
      const outcome = await hub.callTool(name, {}, { timeout: 10_000 }).then(
        (result) => ({ settled: "result", text: text(result), isError: result.isError }),
        (error: unknown) => ({ settled: "error", text: (error as Error).message, isError: true }),
      );
      expect(outcome.isError, `${name}: ${outcome.text}`).toBe(true);
      expect(outcome.text).toMatch(/elicit|input|capabilit/i);
    }
  });
});

describe("hub errors", () => {
  it("takes the config's secrets out of error messages, even from a server's stderr", async () => {
    const secret = "s3cr3t-token-for-redaction";
    const leaky = stdio(
      "leaky",
      process.execPath,
      ["-e", "console.error('my token is ' + process.env.TOKEN); process.exit(2)"],
      {
        env: { TOKEN: secret },
      } as never,
    );
    const hub = track(
      new Hub({ config: configOf([leaky], { secrets: [secret] }), backoff: { initial: 60_000 } }),
    );
    await hub.start();
    const error = hub.servers()[0]?.error ?? "";
    expect(error).toContain("my token is ***");
    expect(error).not.toContain(secret);
    const call = await hub.startServer("leaky").catch((e: unknown) => e as Error);
    expect((call as Error).message).not.toContain(secret);
  });

  it("takes out the secrets a reloaded config brings, as well as the first config's", async () => {
    const first = "first-config-secret-value";
    const later = "reloaded-config-secret-value";
    const leaky = (name: string, secret: string) =>
      stdio(
        name,
        process.execPath,
        ["-e", "console.error('my token is ' + process.env.TOKEN); process.exit(2)"],
        {
          env: { TOKEN: secret },
        } as never,
      );
    const before = configOf([leaky("one", first)], { secrets: [first] });
    const hub = track(new Hub({ config: before, backoff: { initial: 60_000 } }));
    await hub.start();
    const after = configOf([leaky("one", first), leaky("two", later)], { secrets: [later] });
    const outcome = await applyConfig(hub, before, after);
    expect(outcome.added).toEqual(["two"]);
    const errors = Object.fromEntries(hub.servers().map((s) => [s.name, s.error ?? ""]));
    expect(errors.two).toContain("my token is ***");
    expect(errors.two).not.toContain(later);
    // The first config's secret is still hidden (a message about its server may come later).
    expect(hub.redact(`was ${first}`)).toBe("was ***");
  });

  it("names unknown tools and disabled servers precisely", async () => {
    const hub = track(new Hub({ config: configOf([fixture("off", [], { enabled: false }), fixture("on")]) }));
    await hub.start();
    const unknown = await hub.callTool("on__nope", {}).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect((unknown as McplexError).code).toBe("TOOL_NOT_FOUND");
    expect(hub.servers().find((s) => s.name === "off")?.state).toBe("disabled");
    const disabled = await hub.startServer("off").then(
      () => "started",
      (e: unknown) => (e as Error).message,
    );
    expect(disabled).not.toBe("started");
  });
});
