/**
 * Per-user stdio servers (`credentials: per-user`) in the hub: one process per signed-in user
 * with that user's `${user:NAME}` values from the vault, the refusals (no user, not connected,
 * a cap), the idle stop and closeUser ending a user's process. Real processes throughout
 * (test/fixtures/servers/whoami-server.mjs).
 */
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import type { UserRef } from "../../src/credentials/user-credentials.js";
import { ConnectRequiredError } from "../../src/credentials/user-credentials.js";
import { userKey } from "../../src/credentials/user-ref.js";
import { McplexError, UpstreamUnavailableError } from "../../src/errors.js";
import { Hub, type HubEvent } from "../../src/hub/hub.js";
import { alive, nextEvent } from "../support/wait.js";

const WHOAMI = resolve("test/fixtures/servers/whoami-server.mjs");

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function hubOf(extra = "", server = "", options: Partial<ConstructorParameters<typeof Hub>[0]> = {}): Hub {
  const text = `servers:
  who:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(WHOAMI)}, "--tag=\${user:TAG}"]
    env: { WHOAMI_USER: "\${user:NAME}", WHOAMI_KEY: "\${user:API_KEY}" }
    credentials: per-user
${server}${extra}`;
  const hub = new Hub({ config: parseConfig(text, { source: "mcplex.yaml", env: {} }), ...options });
  cleanups.push(() => hub.close());
  return hub;
}

const user = (sub: string): UserRef => ({
  key: userKey("https://idp.test", sub),
  subject: sub,
  issuer: "https://idp.test",
});
const ALICE = user("alice");
const BOB = user("bob");

async function connect(hub: Hub, who: UserRef, server = "who"): Promise<void> {
  await hub.credentialVault.put(who.key, server, {
    values: { NAME: who.subject, API_KEY: `key-of-${who.subject}-0123456789`, TAG: `tag-${who.subject}` },
    connectedAt: Date.now(),
  });
}

interface Whoami {
  pid: number;
  user: string;
  key: string;
  tag: string;
  served: number;
}
async function whoami(hub: Hub, who: UserRef | undefined, tool = "who__whoami"): Promise<Whoami> {
  const result = await hub.callTool(tool, {}, who === undefined ? {} : { user: who });
  const first = result.content[0] as { type: "text"; text: string };
  return JSON.parse(first.text) as Whoami;
}

describe("a per-user stdio server", () => {
  it("runs one process per user, with that user's values, and lists each user's tools to that user only", async () => {
    const hub = hubOf();
    await hub.start();
    // No shared process: nothing listed, nothing started, before a user calls.
    expect(hub.tools()).toEqual([]);
    expect(hub.servers()[0]).toMatchObject({ name: "who", state: "idle", userConnections: 0 });
    await connect(hub, ALICE);
    await connect(hub, BOB);
    const a = await whoami(hub, ALICE);
    const b = await whoami(hub, BOB);
    expect(a).toMatchObject({ user: "alice", key: "key-of-alice-0123456789", tag: "tag-alice" });
    expect(b).toMatchObject({ user: "bob", key: "key-of-bob-0123456789", tag: "tag-bob" });
    expect(a.pid).not.toBe(b.pid);
    // The same user's next call is served by the same process.
    expect((await whoami(hub, ALICE)).pid).toBe(a.pid);
    // Each user sees the list their own process gave; the shared catalog holds no one's.
    for (const user of [ALICE, BOB])
      expect(hub.tools(undefined, user).map((t) => t.name)).toEqual([
        "who__whoami",
        "who__whoami_cached",
        "who__ask",
        "who__leak",
      ]);
    expect(hub.tools()).toEqual([]);
    expect(hub.servers()[0]).toMatchObject({ state: "ready", userConnections: 2 });
    expect(hub.userServers(ALICE.key)).toEqual(["who"]);
    // A user's values are redacted from that user's results only, never by the shared redactor.
    expect(hub.redact("key-of-bob-0123456789")).toBe("key-of-bob-0123456789");
  });

  it("opens one connection for a user's concurrent first calls", async () => {
    const hub = hubOf();
    await connect(hub, ALICE);
    const answers = await Promise.all(Array.from({ length: 10 }, () => whoami(hub, ALICE)));
    expect(new Set(answers.map((a) => a.pid)).size).toBe(1);
    expect(hub.servers()[0]).toMatchObject({ userConnections: 1 });
  });

  it("refuses a caller without a user, saying to sign in", async () => {
    const hub = hubOf();
    await connect(hub, ALICE);
    await whoami(hub, ALICE);
    const refused = await whoami(hub, undefined).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McplexError);
    expect(refused).toMatchObject({ code: "SIGN_IN_REQUIRED" });
    expect((refused as Error).message).toContain("sign in to the gateway with OAuth");
  });

  it("asks a user who has not connected to connect, at the hub's connect URL, and names unset values", async () => {
    const hub = hubOf("", "", {
      connectUrl: (who, server) => `https://gw.test/connect/${server}?u=${who.subject}`,
    });
    const first = await hub.findTool("who__whoami", { user: ALICE }).catch((error: unknown) => error);
    expect(first).toBeInstanceOf(ConnectRequiredError);
    expect((first as ConnectRequiredError).url).toBe("https://gw.test/connect/who?u=alice");
    await hub.credentialVault.put(ALICE.key, "who", { values: { NAME: "alice" }, connectedAt: 0 });
    const partial = await hub.findTool("who__whoami", { user: ALICE }).catch((error: unknown) => error);
    expect(partial).toBeInstanceOf(ConnectRequiredError);
    expect((partial as Error).message).toContain("${user:API_KEY}, ${user:TAG} not set");
  });

  it("without a connect page, says the user has not connected and who can store the values", async () => {
    const hub = hubOf();
    const refused = await hub.findTool("who__whoami", { user: ALICE }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "CONNECT_REQUIRED" });
    expect((refused as Error).message).toContain("you have not connected this server yet");
  });

  it("caps users per server, connections per user, and connections in all, each refusal naming its bound", async () => {
    const second = `  who2:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(WHOAMI)}]
    env: { WHOAMI_USER: "\${user:NAME}" }
    credentials: per-user
`;
    const hub = hubOf("users:\n  maxPerUser: 1\n  maxConnections: 3\n", `    maxUsers: 2\n${second}`);
    const carol = user("carol");
    const dave = user("dave");
    for (const who of [ALICE, BOB, carol, dave]) {
      await connect(hub, who);
      await connect(hub, who, "who2");
    }
    await whoami(hub, ALICE);
    await whoami(hub, BOB);
    const perServer = await whoami(hub, carol).catch((error: unknown) => error);
    expect(perServer).toBeInstanceOf(UpstreamUnavailableError);
    expect((perServer as Error).message).toContain("2 users already hold a connection of their own");
    expect((perServer as Error).message).toContain("raise servers.who.maxUsers");
    const perUser = await whoami(hub, ALICE, "who2__whoami").catch((error: unknown) => error);
    expect((perUser as Error).message).toContain(
      "you already hold 1 per-user connections (users.maxPerUser: 1)",
    );
    await whoami(hub, carol, "who2__whoami");
    const inAll = await whoami(hub, dave, "who2__whoami").catch((error: unknown) => error);
    expect((inAll as Error).message).toContain("3 per-user connections are open");
    expect((inAll as Error).message).toContain("raise users.maxConnections");
    // A closed connection frees its place.
    expect(await hub.closeUser(ALICE.key)).toEqual(["who"]);
    expect((await whoami(hub, dave, "who2__whoami")).user).toBe("dave");
  });

  it("ends a user's process once idle, and the user's next call starts a new one", async () => {
    const hub = hubOf("users:\n  idleTimeout: 300ms\n");
    await connect(hub, ALICE);
    const closed = nextEvent(
      hub,
      (e): e is Extract<HubEvent, { type: "user-connection-closed" }> =>
        e.type === "user-connection-closed" && e.server === "who",
    );
    const first = await whoami(hub, ALICE);
    expect(await closed).toMatchObject({ user: ALICE.key, reason: "idle" });
    // The event comes once the connection is closed, and closing a stdio server waits for its exit.
    expect(alive(first.pid)).toBe(false);
    expect(hub.servers()[0]).toMatchObject({ userConnections: 0 });
    const again = await whoami(hub, ALICE);
    expect(again.pid).not.toBe(first.pid);
    expect(again.served).toBe(1);
  });

  it("removing the server ends every user's process", async () => {
    const hub = hubOf();
    await connect(hub, ALICE);
    await connect(hub, BOB);
    const pids = [(await whoami(hub, ALICE)).pid, (await whoami(hub, BOB)).pid];
    await hub.removeServer("who");
    expect(pids.map(alive)).toEqual([false, false]);
  });

  it("under available:, connecting it starts no process of its own; users' calls open theirs", async () => {
    const text = `available:
  who:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(WHOAMI)}]
    env: { WHOAMI_USER: "\${user:NAME}" }
    credentials: per-user
`;
    const hub = new Hub({ config: parseConfig(text, { source: "mcplex.yaml", env: {} }), toolCache: false });
    cleanups.push(() => hub.close());
    const status = await hub.connectServer("who");
    expect(status).toMatchObject({ name: "who", state: "idle", userConnections: 0 });
    expect(status.pid).toBeUndefined();
    await hub.credentialVault.put(ALICE.key, "who", { values: { NAME: "alice" }, connectedAt: 0 });
    expect((await whoami(hub, ALICE)).user).toBe("alice");
  });

  it("closeUser ends one user's process and leaves the other's", async () => {
    const hub = hubOf();
    await connect(hub, ALICE);
    await connect(hub, BOB);
    const a = await whoami(hub, ALICE);
    const b = await whoami(hub, BOB);
    expect(await hub.closeUser(ALICE.key, "who")).toEqual(["who"]);
    expect(alive(a.pid)).toBe(false);
    expect(alive(b.pid)).toBe(true);
    expect((await whoami(hub, BOB)).pid).toBe(b.pid);
  });
});
