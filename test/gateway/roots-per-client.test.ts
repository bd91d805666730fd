import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { configOf, EVERYTHING, fixture, stdio } from "../support/config.js";
import { eventually, type InProcessGateway, resultText, startGateway } from "../support/gateway.js";

// Several clients behind one gateway, each with its own roots. A server that caches the roots
// it got per connection (server-everything does) would show one client another's roots over a
// shared connection; `share: false` gives each client session a connection of its own.

let gw: InProcessGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/** A 2025 client (so it has a session) whose roots handler answers with `root`. */
async function clientWithRoots(
  url: string,
  root: string,
): Promise<{ client: Client; asked: () => number; end: () => Promise<void> }> {
  let asked = 0;
  const client = new Client(
    { name: `roots-${root}`, version: "1.0.0" },
    { versionNegotiation: { mode: "legacy" }, capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler("roots/list", async () => {
    asked++;
    return { roots: [{ uri: `file:///${root}`, name: root }] };
  });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  // Ending the session (DELETE) is what closes its own connections; closing the client alone
  // leaves the session to the idle sweep.
  const end = async () => {
    await transport.terminateSession();
    await client.close();
  };
  return { client, asked: () => asked, end };
}

async function rootsSeenBy(client: Client, tool: string): Promise<string> {
  return resultText(await client.callTool({ name: tool, arguments: {} }));
}

describe("roots belong to the client that asked", () => {
  it("gives each client session its own connection to a server marked share: false", async () => {
    gw = await startGateway(configOf([stdio("everything", EVERYTHING, ["stdio"], { share: false })]));
    const a = await clientWithRoots(gw.url, "alpha");
    const b = await clientWithRoots(gw.url, "beta");
    try {
      expect(await rootsSeenBy(a.client, "everything__get-roots-list")).toContain("file:///alpha");
      // Over a shared connection the server answers from its cache: alpha's roots.
      const seenByB = await rootsSeenBy(b.client, "everything__get-roots-list");
      expect(seenByB).toContain("file:///beta");
      expect(seenByB).not.toContain("alpha");
      expect(b.asked()).toBeGreaterThan(0);
      expect(gw.hub.servers()[0]?.clientConnections).toBe(2);
    } finally {
      await a.end();
    }
    // A session's own connection closes with the session.
    await eventually(async () => gw?.hub.servers()[0]?.clientConnections === 1 || undefined);
    await b.end();
    await eventually(async () => gw?.hub.servers()[0]?.clientConnections === 0 || undefined);
  });

  it("refuses a client past the server's maxSessions with an error naming the limit", async () => {
    gw = await startGateway(
      configOf([stdio("everything", EVERYTHING, ["stdio"], { share: false, maxSessions: 1 })]),
    );
    const a = await clientWithRoots(gw.url, "alpha");
    const b = await clientWithRoots(gw.url, "beta");
    try {
      await rootsSeenBy(a.client, "everything__get-roots-list");
      const refused = await b.client.callTool({ name: "everything__get-roots-list", arguments: {} });
      expect(refused.isError).toBe(true);
      expect(resultText(refused)).toMatch(/everything.*maxSessions.*1/);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it("tells a shared server its roots changed when a call comes from another client, and answers with that client's roots", async () => {
    gw = await startGateway(configOf([fixture("fx", ["--legacy-only"])]));
    const a = await clientWithRoots(gw.url, "alpha");
    const b = await clientWithRoots(gw.url, "beta");
    try {
      // The fixture asks roots/list during the call and reports what it was told, and how
      // many roots/list_changed notifications it has had.
      const first = JSON.parse(await rootsSeenBy(a.client, "fx__roots"));
      expect(first).toEqual({ roots: ["file:///alpha"], listChanged: 0 });
      const again = JSON.parse(await rootsSeenBy(a.client, "fx__roots"));
      expect(again).toEqual({ roots: ["file:///alpha"], listChanged: 0 });
      const second = JSON.parse(await rootsSeenBy(b.client, "fx__roots"));
      expect(second).toEqual({ roots: ["file:///beta"], listChanged: 1 });
      const back = JSON.parse(await rootsSeenBy(a.client, "fx__roots"));
      expect(back).toEqual({ roots: ["file:///alpha"], listChanged: 2 });
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });
});
