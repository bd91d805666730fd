/**
 * The gateway's connect prompt: a tool call that fails with CONNECT_REQUIRED becomes a URL-mode
 * elicitation for a 2025-11-25 client that takes one (the SDK v2 client), an `input_required`
 * for a 2026 client, and a tool error carrying the link for any other. The user connects at the
 * real `/connect/<server>` page (the values form, through the HTTP front), which tells the
 * waiting call to go on.
 *
 * The hub's call path per user is another part's work: here the hub's dispatch is stubbed to
 * throw CONNECT_REQUIRED while the vault holds nothing for the user, as the per-user source does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { McplexConfig, ServerConfig } from "../../src/config/types.js";
import { ConnectFlow } from "../../src/credentials/connect-flow.js";
import { ConnectLinks } from "../../src/credentials/connect-links.js";
import { ConnectSignal, connectWaiter } from "../../src/credentials/connect-signal.js";
import { FileCredentialVault } from "../../src/credentials/file-credential-vault.js";
import { ConnectRequiredError, type UserRef } from "../../src/credentials/user-credentials.js";
import { connectPages } from "../../src/fronts/connect-pages.js";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { Hub } from "../../src/hub/hub.js";
import { connectPrompt } from "../../src/interceptors/connect-prompt.js";
import { LocalServer } from "../../src/upstream/local-server.js";
import { stdio } from "../support/config.js";
import { postRev2026, rawHttp, rev2026Headers, rev2026Request } from "../support/gateway.js";
import { type AuthServer, startAuthServer } from "../support/oidc-provider.js";
import { LinkBrowser } from "./support/link-browser.js";
import { linkSignIn, userAt } from "./support/link-sign-in.js";

const dir = mkdtempSync(join(tmpdir(), "mcplex-prompt-"));
let user: UserRef;
/** The gateway's identity provider, where the connect page signs its browser in. */
let idp: AuthServer;
let vault: FileCredentialVault;
let links: ConnectLinks;
let hub: Hub;
let gateway: Gateway;
let front: HttpFront;
let base = "";
const connected = new ConnectSignal();
/** The per-user server as the connect page knows it: one `${user:NAME}` value. */
const acct = stdio("acct", "node", ["acct.js"], {
  credentials: "per-user",
  env: { ACCT_KEY: "${user:ACCT_KEY}" },
} as Partial<ServerConfig>);

beforeAll(async () => {
  idp = await startAuthServer();
  user = userAt(idp, "alice");
  vault = new FileCredentialVault({ env: { MCPLEX_HOME: dir } });
  links = new ConnectLinks({ base: () => base });
  const flow = new ConnectFlow({ vault, links, signal: connected });
  const server = new LocalServer("acct", [
    {
      name: "balance",
      handler: async () => ({ content: [{ type: "text", text: "balance: 42" }] }),
    },
  ]);
  const config = {
    source: "test",
    format: "mcplex",
    profiles: {},
    tokens: [],
    secrets: [],
    servers: [
      {
        name: "acct",
        transport: "local",
        server,
        enabled: true,
        lazy: false,
        timeout: 10_000,
        startTimeout: 10_000,
        tools: {},
      },
    ],
  } as unknown as McplexConfig;
  hub = new Hub({ config });
  await hub.start();
  // The stub of the per-user call path: no values in the vault, no call.
  hub.use(
    (next) => async (request) => {
      if ((await vault.get(user.key, "acct"))?.values === undefined)
        throw new ConnectRequiredError("acct", links.connectUrl(user, "acct"));
      return next(request);
    },
    { at: "upstream" },
  );
  gateway = new Gateway(hub, {
    interceptors: [connectPrompt({ waitConnected: connectWaiter(links, connected) })],
  });
  front = await startHttpFront(gateway, {
    port: 0,
    connect: connectPages({
      flow,
      links,
      signIn: linkSignIn(links, idp),
      server: (name) => (name === "acct" ? acct : undefined),
    }),
  });
  base = front.url.replace(/\/mcp$/, "");
});
afterAll(async () => {
  await front?.close();
  gateway?.close();
  await hub?.close();
  rmSync(dir, { recursive: true, force: true });
  await idp?.close();
});
beforeEach(async () => {
  await vault.delete(user.key);
});

/** The user, in a browser, at the link: the form, then the value posted from the page. */
async function connectAt(url: string): Promise<void> {
  const browser = new LinkBrowser(new Map([[idp, "alice"]]));
  const form = await browser.open(url);
  expect(form.status).toBe(200);
  const posted = await browser.submit(form, { ACCT_KEY: "k-123" });
  expect(posted.status).toBe(200);
}

async function client2025(capabilities: Record<string, unknown>): Promise<Client> {
  const client = new Client(
    { name: "prompt-test", version: "1.0.0" },
    { versionNegotiation: { mode: "legacy" }, capabilities },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(front.url)));
  return client;
}

/** A full collection of the heap, from a task of its own, as a loaded gateway has every few seconds. */
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;
const collectSoon = () => new Promise<void>((resolve) => setImmediate(() => resolve(collectGarbage())));

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text ?? "";

describe("the connect prompt", () => {
  it("asks a 2025-11-25 client by URL elicitation, waits for the connect, says it is complete and answers the call", async () => {
    const client = await client2025({ elicitation: { url: {} } });
    const asked: Array<Record<string, unknown>> = [];
    let connecting: Promise<void> | undefined;
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params as Record<string, unknown>);
      // The user accepts, then connects in the browser; the call waits meanwhile.
      connecting = connectAt(String((request.params as { url?: string }).url));
      return { action: "accept" };
    });
    const completed = new Promise<unknown>((resolve) =>
      client.setNotificationHandler("notifications/elicitation/complete", (n) => resolve(n.params)),
    );
    try {
      const result = await client.callTool({ name: "acct__balance", arguments: {} });
      expect(result.isError).not.toBe(true);
      expect(text(result)).toBe("balance: 42");
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ mode: "url", elicitationId: expect.any(String) });
      expect(String(asked[0]!.url)).toMatch(new RegExp(`^${base}/connect/acct\\?ticket=`));
      expect(await completed).toMatchObject({ elicitationId: asked[0]!.elicitationId });
      await connecting;
      expect(connected.size).toBe(0);
    } finally {
      await client.close();
    }
  });

  it("keeps a waiting call that asked for progress alive past its client's timeout", async () => {
    const waiting = new Gateway(hub, {
      interceptors: [connectPrompt({ waitConnected: connectWaiter(links, connected), progressMs: 20 })],
    });
    const second = await startHttpFront(waiting, { port: 0 });
    const client = new Client(
      { name: "prompt-progress-test", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" }, capabilities: { elicitation: { url: {} } } },
    );
    let url = "";
    client.setRequestHandler("elicitation/create", async (request) => {
      url = String((request.params as { url?: string }).url);
      return { action: "accept" };
    });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(second.url)));
      let beats = 0;
      const result = await client.callTool(
        { name: "acct__balance", arguments: {} },
        {
          // Far shorter than a sign-in: only the progress keeps the call alive. The user
          // connects after a few beats have come.
          timeout: 3000,
          resetTimeoutOnProgress: true,
          onprogress: () => {
            if (++beats === 3) void connectAt(url);
          },
        },
      );
      expect(text(result)).toBe("balance: 42");
      expect(beats).toBeGreaterThanOrEqual(3);
    } finally {
      await client.close();
      await second.close();
      waiting.close();
    }
  });

  it("gives the tool error with the link when the user declines", async () => {
    const client = await client2025({ elicitation: { url: {} } });
    client.setRequestHandler("elicitation/create", async () => ({ action: "decline" }));
    try {
      const result = await client.callTool({ name: "acct__balance", arguments: {} });
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(
        /^acct: connect your account first, at http:\/\/\S+\/connect\/acct\?ticket=\S+; then call again$/,
      );
      expect(connected.size).toBe(0);
    } finally {
      await client.close();
    }
  });

  it("gives a client without URL elicitation a tool error whose text carries the link, and the call works once connected", async () => {
    const client = await client2025({ elicitation: { form: {} } });
    try {
      const first = await client.callTool({ name: "acct__balance", arguments: {} });
      expect(first.isError).toBe(true);
      const url = /at (\S+); then call again/.exec(text(first))?.[1];
      expect(url).toBeDefined();
      await connectAt(url!);
      expect(text(await client.callTool({ name: "acct__balance", arguments: {} }))).toBe("balance: 42");
    } finally {
      await client.close();
    }
  });

  it("answers a 2026 client input_required with the URL elicitation, and its retry goes on once the user connected", async () => {
    const capabilities = { elicitation: { url: {} } };
    const call = (extra: Record<string, unknown> = {}) => {
      const message = rev2026Request(
        1,
        "tools/call",
        { name: "acct__balance", arguments: {}, ...extra },
        capabilities,
      );
      // The retry waits for the whole sign-in at the other server (a dozen requests): on a
      // loaded machine that took longer than rawHttp's default 10 s once.
      return rawHttp(front.url, { headers: rev2026Headers(message), body: message, timeoutMs: 60_000 });
    };
    const first = (await call()).json as { result: Record<string, any> };
    expect(first.result.resultType).toBe("input_required");
    const request = first.result.inputRequests.connect;
    expect(request).toMatchObject({
      method: "elicitation/create",
      params: { mode: "url", elicitationId: expect.any(String) },
    });
    const state = first.result.requestState as string;

    // A changed state is refused.
    const forged = (
      await call({
        requestState: `${state.slice(0, -2)}xx`,
        inputResponses: { connect: { action: "accept" } },
      })
    ).json as {
      error?: { message: string };
    };
    expect(forged.error?.message).toContain("requestState was not made for this call");

    // The retry comes before the user is done: it waits, and answers once they connected.
    const retry = call({ requestState: state, inputResponses: { connect: { action: "accept" } } });
    await expect.poll(() => connected.size).toBe(1);
    await connectAt(String(request.params.url));
    const done = (await retry).json as { result: Record<string, any> };
    expect(done.result.content[0].text).toBe("balance: 42");
  });

  it("gives a 2026 client without URL elicitation the tool error with the link", async () => {
    const answer = await postRev2026(
      front.url,
      rev2026Request(2, "tools/call", { name: "acct__balance", arguments: {} }),
    );
    const result = (answer.json as { result: Record<string, any> }).result;
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toContain(`${base}/connect/acct?ticket=`);
  });
});

describe("waiting for a connect", () => {
  it("hears a connect finished on another replica through the shared vault", async () => {
    const here = new ConnectSignal();
    const there = new ConnectFlow({ vault, links, signal: new ConnectSignal() });
    const wait = connectWaiter(links, here, { vault, pollMs: 20 })(
      new ConnectRequiredError("acct", links.connectUrl(user, "acct")),
      AbortSignal.timeout(30_000),
    );
    const ticket = links.check(new URL(links.connectUrl(user, "acct")).searchParams.get("ticket"), "acct");
    await there.saveValues(
      there.valuesGrant(ticket, "browser"),
      "browser",
      acct,
      new URLSearchParams({ ACCT_KEY: "k-9" }),
    );
    await wait;
    expect(here.size).toBe(0);
  });

  it("stops waiting when the call is cancelled", async () => {
    const abort = new AbortController();
    const wait = connectWaiter(links, connected, { vault, pollMs: 20 })(
      new ConnectRequiredError("acct", links.connectUrl(user, "acct")),
      abort.signal,
    );
    abort.abort(new Error("cancelled"));
    await expect(wait).rejects.toThrow("cancelled");
    expect(connected.size).toBe(0);
  });
});

describe("the connect prompt's bound", () => {
  it("gives the tool error at waitMs when the user accepts and never connects, after a full collection of the heap", async () => {
    const quick = new Gateway(hub, {
      interceptors: [connectPrompt({ waitConnected: connectWaiter(links, connected), waitMs: 300 })],
    });
    const quickFront = await startHttpFront(quick, { port: 0 });
    const client = new Client(
      { name: "prompt-test", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" }, capabilities: { elicitation: { url: {} } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(quickFront.url)));
    // The user accepts, and the heap is collected while the call waits for a connect that never comes.
    client.setRequestHandler("elicitation/create", async () => {
      await collectSoon();
      return { action: "accept" };
    });
    try {
      const result = await client.callTool({ name: "acct__balance", arguments: {} });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain(`${base}/connect/acct?ticket=`);
      expect(connected.size).toBe(0);
    } finally {
      await client.close();
      await quickFront.close();
      quick.close();
    }
  }, 15_000);
});
