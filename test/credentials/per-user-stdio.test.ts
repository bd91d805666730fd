/**
 * Per-user stdio servers end to end: mcplex served over HTTP with sign-in (`auth:`) against a
 * real authorization server (oidc-provider), users signed in through its code flow, calls as
 * 2026 POSTs to `/mcp`. Each user's calls run in their own process with their own
 * `${user:NAME}` values (put in the vault directly: the connect page is not this test's); a
 * static token is refused; the result cache and a parked input request stay with their user.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultText } from "../support/gateway.js";
import { type PerUserGateway, STATIC_TOKEN, startPerUserGateway, type Whoami } from "./per-user-gateway.js";

let gw: PerUserGateway;
beforeAll(async () => {
  // carol sees the catalog in code mode, dave in search mode: their inner calls are theirs too.
  gw = await startPerUserGateway(
    ["alice", "bob", "carol", "dave"],
    `  access:
    - when: { sub: [carol] }
      mode: code
    - when: { sub: [dave] }
      mode: search
    - when: { groups: [eng] }
`,
  );
}, 60_000);
afterAll(() => gw?.close());

describe("a per-user stdio server served with sign-in", () => {
  it("runs each signed-in user's calls in their own process, with their own values", async () => {
    const alice = await gw.whoami("alice");
    const bob = await gw.whoami("bob");
    expect(alice).toMatchObject({ user: "alice", key: "api-key-of-alice-0123456789", tag: "tag-of-alice" });
    expect(bob).toMatchObject({ user: "bob", key: "api-key-of-bob-0123456789", tag: "tag-of-bob" });
    expect(alice.pid).not.toBe(bob.pid);
    expect((await gw.whoami("alice")).pid).toBe(alice.pid);
    expect(gw.running.hub.servers().find((s) => s.name === "who")).toMatchObject({ userConnections: 2 });
  });

  it("makes the inner calls of run_code and call_tool as the caller's own user", async () => {
    await gw.whoami("alice");
    const script = await gw.call(gw.tokens.carol!, "run_code", {
      code: "return await tools.who.whoami({ echo: 'from a script' });",
    });
    expect(resultText((script.json as { result: unknown }).result)).toContain('"user":"carol"');
    const meta = await gw.call(gw.tokens.dave!, "call_tool", { name: "who__whoami", arguments: {} });
    expect(JSON.parse(resultText((meta.json as { result: unknown }).result))).toMatchObject({
      user: "dave",
      key: "api-key-of-dave-0123456789",
    });
  });

  it("refuses a static-token caller, saying sign-in is needed", async () => {
    const answer = await gw.call(STATIC_TOKEN, "who__whoami");
    const text = JSON.stringify(answer.json);
    expect(text).toContain("sign in to the gateway with OAuth to call it");
    expect(text).not.toContain("api-key-of");
  });

  it("redacts a user's values from what the server's errors quote", async () => {
    const answer = await gw.call(gw.tokens.alice!, "who__leak");
    const text = JSON.stringify(answer.json);
    expect(text).toContain("refused with key ***");
    expect(text).not.toContain("api-key-of-alice");
  });

  it("never gives one user the result cached for another", async () => {
    const first = await gw.whoami("alice", "who__whoami_cached", { echo: "same" });
    const again = await gw.whoami("alice", "who__whoami_cached", { echo: "same" });
    // Cached: the same answer, not a second call to the process.
    expect(again).toEqual(first);
    const bob = await gw.whoami("bob", "who__whoami_cached", { echo: "same" });
    expect(bob).toMatchObject({ user: "bob", key: "api-key-of-bob-0123456789" });
  });

  it("keeps a parked input request to the user it was asked of", async () => {
    const caps = { elicitation: {} };
    const first = await gw.call(gw.tokens.alice!, "who__ask", {}, caps);
    const result = (first.json as { result: Record<string, unknown> }).result;
    expect(result.resultType).toBe("input_required");
    const [key] = Object.keys(result.inputRequests as object);
    const retry = (user: string) =>
      gw.call(gw.tokens[user]!, "who__ask", {}, caps, {
        inputResponses: { [key!]: { action: "accept", content: { word: `from-${user}` } } },
        requestState: result.requestState,
      });
    const stolen = await retry("bob");
    expect(JSON.stringify(stolen.json)).toMatch(/issued to another client/);
    const rightful = await retry("alice");
    const answer = JSON.parse(resultText((rightful.json as { result: unknown }).result)) as Whoami;
    expect(answer).toMatchObject({ user: "alice", word: "from-alice" });
  });

  it("sends a server's request during a call to the session of the user who made it (2025 sessions)", async () => {
    const session = async (user: string) => {
      const client = new Client(
        { name: `per-user-${user}`, version: "1.0.0" },
        { versionNegotiation: { mode: "legacy" }, capabilities: { elicitation: {} } },
      );
      client.setRequestHandler("elicitation/create", async () => ({
        action: "accept",
        content: { word: `answered-by-${user}` },
      }));
      await client.connect(
        new StreamableHTTPClientTransport(new URL(gw.mcp), {
          requestInit: { headers: { authorization: `Bearer ${gw.tokens[user]}` } },
        }),
      );
      return client;
    };
    const [alice, bob] = await Promise.all([session("alice"), session("bob")]);
    try {
      const ask = async (client: Client) =>
        JSON.parse(resultText(await client.callTool({ name: "who__ask", arguments: {} }))) as Whoami;
      // One call in flight per user's connection at a time: a 2025 server's request does not say
      // which call it belongs to, so two on one connection are declined (never guessed).
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all([ask(alice), ask(bob)]);
        expect(answers.map((a) => `${a.user}:${a.word}`)).toEqual([
          "alice:answered-by-alice",
          "bob:answered-by-bob",
        ]);
      }
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  });
});
