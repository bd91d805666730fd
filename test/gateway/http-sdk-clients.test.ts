import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client,
  StreamableHTTPClientTransport,
  SUBSCRIPTION_ID_META_KEY,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  COMMANDS,
  postRev2026,
  resultText,
  rev2026Headers,
  rev2026Request,
  type ServeProcess,
  serveHttp,
  sseMessages,
  yamlConfig,
} from "../support/gateway.js";
import { frontContract } from "./front-contract.case.js";

// `mcplex serve --http`: the front contract (shared with stdio and WebSocket), then what only
// HTTP has: listen streams over SSE, 2025 sessions' list changes, raw input_required rounds.

let dir: string;
let gw: ServeProcess;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-gw-http-"));
  const config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    // What only HTTP has needs only the fixture, dual-era and 2025-only.
    yamlConfig({ fx: COMMANDS.fixture, legacy: COMMANDS.legacyFixture }),
  );
  gw = await serveHttp(["--config", config]);
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function connect(mode: "legacy" | "auto"): Promise<Client> {
  const client = new Client(
    { name: "gateway-http-test", version: "1.0.0" },
    { versionNegotiation: { mode }, capabilities: { elicitation: {} } },
  );
  client.setRequestHandler("elicitation/create", async () => ({
    action: "accept",
    content: { name: "Grace" },
  }));
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  return client;
}

frontContract("mcplex serve --http", {
  async start(config) {
    const served = await serveHttp(["--config", config]);
    return {
      transport: () => new StreamableHTTPClientTransport(new URL(served.url)),
      stop: () => served.stop(),
    };
  },
});

describe("list changes through the HTTP front", () => {
  it("delivers tools/list_changed to a 2026 client's subscriptions/listen, tagged with its subscription id", async () => {
    const client = await connect("auto");
    try {
      const changed = new Promise<Record<string, unknown>>((done) =>
        client.setNotificationHandler("notifications/tools/list_changed", (n) =>
          done((n.params ?? {}) as Record<string, unknown>),
        ),
      );
      const subscription = await client.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      const added = resultText(await client.callTool({ name: "fx__add_tool", arguments: {} }));
      const params = await changed;
      const meta = params._meta as Record<string, unknown>;
      expect(meta[SUBSCRIPTION_ID_META_KEY]).toEqual(expect.any(String));
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain(`fx__${added.replace("added ", "")}`);
      await subscription.close();
    } finally {
      await client.close();
    }
  });

  it("acknowledges a raw listen and tags list_changed with the listen's own JSON-RPC id", async () => {
    const listen = rev2026Request(77, "subscriptions/listen", { notifications: { toolsListChanged: true } });
    const controller = new AbortController();
    const res = await fetch(gw.url, {
      method: "POST",
      headers: rev2026Headers(listen),
      body: JSON.stringify(listen),
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    const messages: Array<{ method?: string; params?: { _meta?: Record<string, unknown> } }> = [];
    const next = async () => {
      for (;;) {
        const events = buffer.split("\n\n");
        buffer = events.pop() ?? "";
        messages.push(...(sseMessages(events.join("\n\n")) as typeof messages));
        if (messages.length > 0) return messages.shift()!;
        const { value, done } = await reader.read();
        if (done) throw new Error("the listen stream ended");
        buffer += value;
      }
    };
    try {
      const ack = await next();
      expect(ack.method).toBe("notifications/subscriptions/acknowledged");
      expect(ack.params?._meta?.[SUBSCRIPTION_ID_META_KEY]).toBe(77);
      const call = rev2026Request(78, "tools/call", { name: "fx__add_tool", arguments: {} });
      const added = await postRev2026(gw.url, call);
      expect(resultText((added.json as { result: unknown }).result)).toMatch(/^added extra_/);
      const changed = await next();
      expect(changed.method).toBe("notifications/tools/list_changed");
      expect(changed.params?._meta?.[SUBSCRIPTION_ID_META_KEY]).toBe(77);
    } finally {
      controller.abort();
      await reader.cancel().catch(() => {});
    }
  });

  it("notifies a 2025 session of tools/list_changed", async () => {
    const client = await connect("legacy");
    try {
      const changed = new Promise<void>((done) =>
        client.setNotificationHandler("notifications/tools/list_changed", () => done()),
      );
      await client.callTool({ name: "fx__add_tool", arguments: {} });
      await changed;
    } finally {
      await client.close();
    }
  });
});

describe("2026 input requests over a 2025 upstream", () => {
  it("answers input_required to a raw 2026 call and completes it when the input comes back", async () => {
    const caps = { elicitation: {} };
    const first = await postRev2026(
      gw.url,
      rev2026Request(1, "tools/call", { name: "legacy__ask_name" }, caps),
    );
    expect(first.status).toBe(200);
    const result = (first.json as { result: Record<string, unknown> }).result;
    expect(result.resultType).toBe("input_required");
    const requests = result.inputRequests as Record<string, { method: string }>;
    const [key, request] = Object.entries(requests)[0]!;
    expect(request.method).toBe("elicitation/create");
    const retry = rev2026Request(
      2,
      "tools/call",
      {
        name: "legacy__ask_name",
        inputResponses: { [key]: { action: "accept", content: { name: "Ada" } } },
        requestState: result.requestState,
      },
      caps,
    );
    const second = await postRev2026(gw.url, retry);
    const done = (second.json as { result: Record<string, unknown> }).result;
    expect(done.resultType).toBe("complete");
    expect(resultText(done)).toBe("hello Ada");
  });
});
