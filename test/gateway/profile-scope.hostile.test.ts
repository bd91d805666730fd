import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { qualifyUri } from "../../src/catalog/index.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { configOf, EVERYTHING, fixture, stdio } from "../support/config.js";
import {
  type InProcessGateway,
  postRev2026,
  rawHttp,
  rev2026Request,
  startGateway,
} from "../support/gateway.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";
import { rng } from "../support/rng.js";

// A token bound to a profile of tool globs for one server probes the other server (resources,
// templates, prompts, completions) through every method, URI form and front, then the
// dashboard and the operator endpoints. Each refusal must look exactly like a missing item.

const FIX_ONLY = "fix-only-token-0123456789";
const EVERY_ONLY = "every-only-token-0123456789";
const OPERATOR = "operator-token-0123456789";
const SCRAPER = "scraper-token-0123456789";

const DOC = "demo://resource/static/document/architecture.md";
const TEMPLATE = "demo://resource/dynamic/text/{resourceId}";
const TEMPLATED = "demo://resource/dynamic/text/7";

let gw: InProcessGateway;

beforeAll(async () => {
  gw = await startGateway(
    configOf([fixture("fix"), stdio("every", EVERYTHING, ["stdio"])], {
      profiles: {
        fixonly: { tools: { allow: ["fix__*"] } },
        everyonly: { tools: { allow: ["every__*"] } },
      },
      tokens: [
        { token: FIX_ONLY, profile: "fixonly" },
        { token: EVERY_ONLY, profile: "everyonly" },
        { token: OPERATOR },
        { token: SCRAPER, profile: "fixonly", operator: true },
      ],
    }),
  );
}, 60_000);

afterAll(async () => {
  await gw?.stop();
});

type Params = Record<string, unknown>;
/** What a request came to: a result, or the error with the probed name replaced by `<X>`. */
type Outcome = { result: Params } | { code: number; message: string };

/** One way of talking to the gateway. */
interface Front {
  call(method: string, params: Params): Promise<Outcome>;
  close(): Promise<void>;
}

async function sdkFront(transport: () => Transport, mode: "legacy" | "auto"): Promise<Front> {
  const client = new Client({ name: "scope-probe", version: "1.0.0" }, { versionNegotiation: { mode } });
  await client.connect(transport());
  return {
    async call(method, params) {
      try {
        const p = params as never;
        const result =
          method === "resources/list"
            ? await client.listResources()
            : method === "resources/templates/list"
              ? await client.listResourceTemplates()
              : method === "prompts/list"
                ? await client.listPrompts()
                : method === "resources/read"
                  ? await client.readResource(p)
                  : method === "prompts/get"
                    ? await client.getPrompt(p)
                    : method === "completion/complete"
                      ? await client.complete(p)
                      : await client.subscribeResource(p);
        return { result: result as Params };
      } catch (error) {
        const e = error as { code?: number; message: string };
        return { code: e.code ?? 0, message: e.message };
      }
    },
    close: () => client.close(),
  };
}

const FRONTS: Record<string, (token: string) => Promise<Front>> = {
  "2025 /mcp": (token) =>
    sdkFront(
      () =>
        new StreamableHTTPClientTransport(new URL(gw.url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      "legacy",
    ),
  "2026 /mcp": async (token) => {
    let id = 0;
    return {
      async call(method, params) {
        const res = await postRev2026(gw.url, rev2026Request(++id, method, params), {
          authorization: `Bearer ${token}`,
        });
        const body = res.json as { result?: Params; error?: { code: number; message: string } };
        return body.error === undefined ? { result: body.result ?? {} } : body.error;
      },
      close: async () => {},
    };
  },
  "/ws": (token) =>
    sdkFront(
      () => new WebSocketClientTransport({ url: gw.wsUrl, headers: { authorization: `Bearer ${token}` } }),
      "auto",
    ),
};

/** The same request about `name` and about a name that exists nowhere, answers compared. */
async function probe(
  front: Front,
  method: string,
  params: (name: string) => Params,
  name: string,
  missing: string,
) {
  const normalise = (o: Outcome, n: string): Outcome =>
    "result" in o ? o : { code: o.code, message: o.message.split(n).join("<X>") };
  return {
    probed: normalise(await front.call(method, params(name)), name),
    missing: normalise(await front.call(method, params(missing)), missing),
  };
}

/** Every way of naming another server's item. */
function attacks(): Array<{
  what: string;
  method: string;
  params: (n: string) => Params;
  name: string;
  missing: string;
}> {
  const read = (uri: string) => ({ uri });
  return [
    {
      what: "listed URI",
      method: "resources/read",
      params: read,
      name: DOC,
      missing: "demo://missing/doc.md",
    },
    {
      what: "mcplex:// URI",
      method: "resources/read",
      params: read,
      name: qualifyUri("every", DOC),
      missing: qualifyUri("every", "demo://missing/doc.md"),
    },
    {
      what: "percent-encoded server name",
      method: "resources/read",
      params: read,
      name: `mcplex://%65%76ery/${encodeURIComponent(DOC)}`,
      missing: `mcplex://%65%76ery/${encodeURIComponent("demo://missing/doc.md")}`,
    },
    {
      what: "template-matched URI",
      method: "resources/read",
      params: read,
      name: TEMPLATED,
      missing: "demo://missing/7",
    },
    {
      what: "subscribe",
      method: "resources/subscribe",
      params: read,
      name: DOC,
      missing: "demo://missing/doc.md",
    },
    {
      what: "prompts/get",
      method: "prompts/get",
      params: (name) => ({ name, arguments: {} }),
      name: "every__simple-prompt",
      missing: "every__missing-prompt",
    },
    {
      what: "completion of a prompt",
      method: "completion/complete",
      params: (name) => ({ ref: { type: "ref/prompt", name }, argument: { name: "department", value: "E" } }),
      name: "every__completable-prompt",
      missing: "every__missing-prompt",
    },
    {
      what: "completion of a template",
      method: "completion/complete",
      params: (uri) => ({ ref: { type: "ref/resource", uri }, argument: { name: "resourceId", value: "1" } }),
      name: TEMPLATE,
      missing: "demo://missing/{resourceId}",
    },
  ];
}

describe.each(Object.keys(FRONTS))("a tool-glob profile over %s", (frontName) => {
  const open = FRONTS[frontName]!;

  it("lists no resources, templates or prompts of a server it has no tools of", async () => {
    const front = await open(FIX_ONLY);
    try {
      const uris = (r: Outcome) =>
        ("result" in r ? (r.result.resources as Array<{ uri: string }>) : []).map((x) => x.uri);
      expect(uris(await front.call("resources/list", {}))).toEqual(["fixture://readme"]);
      expect(await front.call("resources/templates/list", {})).toEqual({
        result: expect.objectContaining({ resourceTemplates: [] }),
      });
      const prompts = await front.call("prompts/list", {});
      expect(JSON.stringify(prompts)).not.toContain("every__");
    } finally {
      await front.close();
    }
  }, 30_000);

  it("refuses every method and URI form on the other server exactly like a missing item", async () => {
    const front = await open(FIX_ONLY);
    try {
      for (const a of attacks()) {
        const { probed, missing } = await probe(front, a.method, a.params, a.name, a.missing);
        expect.soft("code" in missing, `${a.what}: the missing item must be refused`).toBe(true);
        expect.soft(probed, a.what).toEqual(missing);
      }
    } finally {
      await front.close();
    }
  }, 60_000);

  it("serves the same methods and URI forms to the profile of that server", async () => {
    const front = await open(EVERY_ONLY);
    try {
      for (const a of attacks()) {
        // 2026 has no resources/subscribe (clients listen instead): only 2025 sessions subscribe.
        if (a.method === "resources/subscribe" && frontName !== "2025 /mcp") continue;
        const outcome = await front.call(a.method, a.params(a.name));
        expect(outcome, a.what).toHaveProperty("result");
      }
      const listed = await front.call("prompts/list", {});
      expect(JSON.stringify(listed)).toContain("every__simple-prompt");
    } finally {
      await front.close();
    }
  }, 60_000);
});

it(
  "refuses the other server under any percent-encoding of its name",
  async () => {
    const front = await FRONTS["2026 /mcp"]!(FIX_ONLY);
    const random = rng(5);
    const tries = attackSize(20, 2_000);
    const missing = (await front.call("resources/read", { uri: "demo://missing/doc.md" })) as {
      code: number;
    };
    let refused = 0;
    for (let i = 0; i < tries; i++) {
      const server = [..."every"]
        .map((c) => {
          if (random() < 0.5) return c;
          const hex = c.charCodeAt(0).toString(16);
          return `%${random() < 0.5 ? hex : hex.toUpperCase()}`;
        })
        .join("");
      const uri = `mcplex://${server}/${random() < 0.5 ? encodeURIComponent(DOC) : DOC}`;
      const outcome = await front.call("resources/read", { uri });
      expect(outcome, uri).toMatchObject({ code: missing.code });
      refused++;
    }
    reportFigure("percent-encoded mcplex:// server names", `${refused}/${tries} refused as missing`);
  },
  attackTimeout(60_000, 600_000),
);

it("refuses the other server through the hub's library API too", async () => {
  const profile = { profile: "fixonly" };
  await expect(gw.hub.readResource(DOC, profile)).rejects.toThrow(`unknown resource "${DOC}"`);
  await expect(gw.hub.readResource(TEMPLATED, profile)).rejects.toThrow(/unknown resource/);
  await expect(gw.hub.getPrompt("every__simple-prompt", {}, profile)).rejects.toThrow(/unknown prompt/);
  await expect(
    gw.hub.complete({ type: "ref/resource", uri: TEMPLATE }, { name: "resourceId", value: "1" }, profile),
  ).rejects.toThrow(/unknown resource template/);
  await expect(gw.hub.subscribeResource(DOC, profile)).rejects.toThrow(/unknown resource/);
  expect(gw.hub.servers("fixonly").map((s) => s.name)).toEqual(["fix"]);
  expect((await gw.hub.readResource(DOC, { profile: "everyonly" })).contents).toHaveLength(1);
});

describe("dashboard and operator endpoints", () => {
  const get = (path: string, token?: string) =>
    rawHttp(`${gw.origin}${path}`, {
      method: "GET",
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });

  it("shows a profile-bound token only the servers of its profile on the dashboard", async () => {
    const res = await get("/dashboard/state", FIX_ONLY);
    expect(res.status).toBe(200);
    const state = res.json as {
      servers: Array<{ name: string }>;
      health: { servers: Array<{ name: string }> };
    };
    expect(state.servers.map((s) => s.name)).toEqual(["fix"]);
    expect(state.health.servers.map((s) => s.name)).toEqual(["fix"]);
    expect(res.body).not.toContain('"every"');
    const operator = (await get("/dashboard/state", OPERATOR)).json as { servers: Array<{ name: string }> };
    expect(operator.servers.map((s) => s.name)).toEqual(["fix", "every"]);
  });

  it.each(["/metrics", "/readyz"])("keeps %s for operator tokens", async (path) => {
    const refused = await get(path, FIX_ONLY);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatch(/operator/);
    expect(refused.body).not.toContain("every");
    expect((await get(path)).status).toBe(401);
    for (const token of [OPERATOR, SCRAPER]) {
      const res = await get(path, token);
      expect(res.status, token).toBe(200);
      expect(res.body).toContain("every");
    }
  });
});
