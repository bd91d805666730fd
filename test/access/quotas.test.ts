/**
 * `quotas:`: windows and running calls counted per caller or for everyone, the refusal that says
 * when to retry, the config's checks, and the hub's layer over a real (in-process) server whose
 * calls the test holds open, so "at once" is an event, not a race.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MemoryQuotaStore, QuotaExceededError, Quotas } from "../../src/access/quotas.js";
import { buildHub } from "../../src/assembly/build-hub.js";
import type { CatalogTool } from "../../src/catalog/types.js";
import { parseConfig } from "../../src/config/parse-config.js";
import type { McplexConfig, QuotaConfig } from "../../src/config/types.js";
import type { Hub, HubEvent } from "../../src/hub/hub.js";
import { LocalServer } from "../../src/upstream/local-server.js";
import { issuesOf } from "../support/config-errors.js";

const tool = (name: string, server = "gh") => ({ name, server, originalName: name }) as CatalogTool;
const quota = (q: Partial<QuotaConfig>): QuotaConfig => ({ name: "q", per: "caller", ...q });

describe("Quotas", () => {
  it("counts calls per caller in windows that start on the clock's multiples, and says when to retry", async () => {
    let now = 60_000 * 1000 + 15_000;
    const quotas = new Quotas(
      [quota({ calls: 2, window: 60_000 })],
      new MemoryQuotaStore(() => now),
      () => now,
    );
    const picked = quotas.picking(tool("gh__search"), undefined);
    await quotas.admit(picked, "alice");
    await quotas.admit(picked, "alice");
    const refused = await quotas.admit(picked, "alice").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QuotaExceededError);
    expect(refused).toMatchObject({
      code: "QUOTA_EXCEEDED",
      quota: "q",
      retryAt: 60_000 * 1001,
      retryable: true,
    });
    expect((refused as Error).message).toBe(
      `quota "q" allows 2 calls per 1m per caller; try again in 45 s (at ${new Date(60_000 * 1001).toISOString()})`,
    );
    // Another caller has a count of its own; the next window starts afresh.
    await quotas.admit(picked, "bob");
    now = 60_000 * 1001;
    await quotas.admit(picked, "alice");
  });

  it("shares one count among every caller with per: all, and picks calls by server, tool and profile", async () => {
    const quotas = new Quotas(
      [
        quota({ name: "everyone", per: "all", calls: 1, window: 60_000, tools: ["gh__search*"] }),
        quota({ name: "billing", servers: ["billing"], profiles: ["contractors"], calls: 1, window: 60_000 }),
      ],
      new MemoryQuotaStore(),
    );
    expect(quotas.picking(tool("gh__search_code"), undefined).map((q) => q.name)).toEqual(["everyone"]);
    expect(quotas.picking(tool("gh__get_me"), undefined)).toEqual([]);
    expect(quotas.picking(tool("billing__pay", "billing"), "contractors").map((q) => q.name)).toEqual([
      "billing",
    ]);
    expect(quotas.picking(tool("billing__pay", "billing"), "staff")).toEqual([]);
    const picked = quotas.picking(tool("gh__search_code"), undefined);
    await quotas.admit(picked, "alice");
    await expect(quotas.admit(picked, "bob")).rejects.toThrow(
      /quota "everyone" allows 1 call per 1m for everyone/,
    );
  });

  it("gives back running places when a window refuses, so a refused call holds nothing", async () => {
    const store = new MemoryQuotaStore();
    const quotas = new Quotas(
      [quota({ name: "at-once", concurrent: 1 }), quota({ name: "per-minute", calls: 1, window: 60_000 })],
      store,
    );
    const picked = quotas.picking(tool("gh__x"), undefined);
    const first = await quotas.admit(picked, "alice");
    await expect(quotas.admit(picked, "alice")).rejects.toThrow(
      /quota "at-once" allows 1 call at once per caller/,
    );
    first.release();
    // The window refuses now; the running place it took first is given back.
    await expect(quotas.admit(picked, "alice")).rejects.toThrow(/quota "per-minute"/);
    expect(store.enter("running\0at-once\0c1\0alice", "probe", 1)).toBe(true);
  });
});

describe("quotas: in the config", () => {
  it("reads a quota with its defaults, and names each mistake with its path", () => {
    const config = parseConfig(
      'servers: {}\nquotas:\n  - { name: searches, tools: ["gh__search_*"], calls: 100, window: 1h, concurrent: 4 }\n',
      { source: "q.yaml", env: {} },
    );
    expect(config.quotas).toEqual([
      {
        name: "searches",
        per: "caller",
        tools: ["gh__search_*"],
        calls: 100,
        window: 3_600_000,
        concurrent: 4,
      },
    ]);
    const issues = issuesOf(`servers: {}
quotas:
  - { name: a, calls: 10 }
  - { name: b, window: 1m }
  - { name: c }
  - { calls: 1, window: 1m }
  - { name: a, concurrent: 0, per: everyone }
  - { name: e, calls: 1, window: 10ms }
`);
    const messages = issues.map((i) => `${i.path}: ${i.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^quotas\[0\]: has "calls" but no "window"/),
        expect.stringMatching(/^quotas\[1\]: has a "window" but no "calls"/),
        expect.stringMatching(/^quotas\[2\]: limits nothing/),
        expect.stringMatching(/^quotas\[3\]\.name: is required/),
        expect.stringMatching(/^quotas\[4\]\.concurrent: /),
        expect.stringMatching(/^quotas\[4\]\.per: /),
        expect.stringMatching(/^quotas\[5\]\.window: must be at least 1s/),
      ]),
    );
  });
});

describe("quotas on the hub's path", () => {
  let hub: Hub | undefined;
  afterEach(async () => {
    await hub?.close();
    hub = undefined;
  });

  it("refuses a call over `concurrent` while another runs, counts the refusal, and lets the next in", async () => {
    const waiting: Array<() => void> = [];
    const server = new LocalServer("app", [
      {
        name: "slow",
        handler: () =>
          new Promise((resolve) =>
            waiting.push(() => resolve({ content: [{ type: "text", text: "done" }] })),
          ),
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
          name: "app",
          transport: "local",
          server,
          enabled: true,
          lazy: false,
          timeout: 10_000,
          startTimeout: 10_000,
          tools: {},
        },
      ],
      quotas: [{ name: "one-at-a-time", per: "caller", concurrent: 1 }],
    } as unknown as McplexConfig;
    const built = await buildHub({ config, onRecordFailed: () => {} });
    hub = built.hub;
    await hub.start();
    const decisions: HubEvent[] = [];
    hub.on((event) => {
      if (event.type === "decision") decisions.push(event);
    });
    const first = hub.callTool("app__slow", {}, {});
    await expect.poll(() => waiting.length).toBe(1);
    const refused = await hub.callTool("app__slow", {}, {}).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "QUOTA_EXCEEDED", quota: "one-at-a-time" });
    expect(decisions).toEqual([{ type: "decision", by: "quota", name: "one-at-a-time", effect: "refused" }]);
    waiting.shift()!();
    expect(await first).toMatchObject({ content: [{ text: "done" }] });
    const third = hub.callTool("app__slow", {}, {});
    await expect.poll(() => waiting.length).toBe(1);
    waiting.shift()!();
    expect(await third).toMatchObject({ content: [{ text: "done" }] });
  });
});
