import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogView } from "../../src/catalog-modes/catalog-view.js";
import { viewEngines } from "../../src/catalog-modes/view-engines.js";
import { DEFAULT_LIMITS } from "../../src/code-mode/index.js";
import { MAX_WORKERS } from "../../src/code-mode/sandbox-queue.js";
import type { Interceptor } from "../../src/hub/call-pipeline.js";
import { configOf, fixture } from "../support/config.js";
import {
  connectHttp,
  eventually,
  type InProcessGateway,
  rawHttp,
  resultText,
  startGateway,
} from "../support/gateway.js";

// The sandbox's queue through the gateway: each token is a client with its own queue; a
// script past its client's queue is a CODE_BUSY tool error saying when to retry, and the
// waits show in /metrics.

const TOKENS = { flood: "flood-token-0123456789", other: "other-token-0123456789" };
let gw: InProcessGateway;
/** Resolvers waiting for a call whose arguments carry a given tag. */
const tagged = new Map<string, () => void>();
const watchTags: Interceptor = (next) => async (request) => {
  const tag = (request.params.arguments as { tag?: unknown } | undefined)?.tag;
  if (typeof tag === "string") tagged.get(tag)?.();
  return next(request);
};
const callTagged = (tag: string) => new Promise<void>((resolve) => tagged.set(tag, resolve));

beforeAll(async () => {
  const config = configOf([fixture("fx")], {
    tokens: [
      { token: TOKENS.flood, mode: "code" },
      { token: TOKENS.other, mode: "code" },
    ],
  });
  // Scripts hold their workers on a slow call for as long as the test needs.
  const view = new CatalogView({ mode: "code" }, viewEngines({ codeLimits: { wallMs: 120_000 } }));
  gw = await startGateway(config, {}, { interceptors: [watchTags], views: () => view });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
});

const connect = (token: string) => connectHttp(gw.url, { token, name: "queue-test" });

const run = (client: Client, code: string, options: { signal?: AbortSignal } = {}) =>
  client.callTool({ name: "run_code", arguments: { code } }, options);

async function metrics(): Promise<string> {
  const res = await rawHttp(`${gw.origin}/metrics`, {
    method: "GET",
    headers: { authorization: `Bearer ${TOKENS.flood}` },
  });
  return res.body;
}

describe("the code sandbox's queue through the gateway", () => {
  it("refuses a client's script past its queue at once as busy, counted in /metrics, while another client's script runs", async () => {
    const flood = await connect(TOKENS.flood);
    const other = await connect(TOKENS.other);
    const cancel = new AbortController();
    try {
      // The flooding client's scripts hold every shared worker on a slow call, and its queue is full.
      const running = Array.from({ length: MAX_WORKERS }, (_, i) => callTagged(`held-${i}`));
      const held = Array.from({ length: MAX_WORKERS + DEFAULT_LIMITS.maxQueued }, (_, i) =>
        run(flood, `await tools.fx.slow({ ms: 120000, step: 50, tag: "held-${i}" })`, {
          signal: cancel.signal,
        }).catch(() => undefined),
      );
      await Promise.all(running);
      await eventually(async () =>
        (await metrics()).includes(`mcplex_code_scripts{state="waiting"} ${DEFAULT_LIMITS.maxQueued}`)
          ? true
          : undefined,
      );
      const refused = await run(flood, "return 1");
      expect(refused.isError).toBe(true);
      expect(resultText(refused)).toMatch(
        /^CODE_BUSY: The code sandbox is busy: 16 scripts of this client already wait for a worker \(limits\.maxQueued is 16\); retry after \d+ s\.\nhint: /,
      );
      const meta = (refused._meta as Record<string, { code: string; retryAt: number }>)["mcplex/error"];
      expect(meta?.code).toBe("CODE_BUSY");
      expect(meta?.retryAt).toBeGreaterThan(Date.now());
      // The other client's script runs meanwhile, on a worker of its own.
      expect(resultText(await run(other, "return 6 * 7"))).toBe("42");
      const text = await metrics();
      expect(text).toContain('mcplex_code_busy_total{reason="queue_full"} 1');
      expect(text).toContain(`mcplex_code_scripts{state="running"} ${MAX_WORKERS}`);
      expect(text).toMatch(/^mcplex_code_queue_seconds_count \d+$/m);
      cancel.abort();
      await Promise.all(held);
    } finally {
      cancel.abort();
      await Promise.all([flood.close(), other.close()]);
    }
  });
});
