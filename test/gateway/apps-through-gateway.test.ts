import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postRev2026, rev2026Request, type ServeProcess, serveHttp } from "../support/gateway.js";

/**
 * MCP Apps (SEP-1865) through `mcplex serve --http`: two servers with an app each (the skills
 * fixture as "alpha", 2026, and "beta", 2025; both list their app tools only to a client that
 * declares the extension), read by raw 2026 POSTs as a client that renders apps and as one
 * that does not.
 */
const APPS = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };
const OPEN = "open-token-0123456789abcdef";
const ALPHA = "alpha-only-token-0123456789";
const SEARCH = "search-mode-token-0123456789";
let served: ServeProcess;
let dir: string;
let id = 0;

type Answer = { result?: Record<string, unknown>; error?: { code: number; message: string } };

async function call(
  method: string,
  params: Record<string, unknown> = {},
  options: { token?: string; capabilities?: Record<string, unknown> } = {},
): Promise<Answer> {
  const message = rev2026Request(++id, method, params, options.capabilities ?? {});
  const res = await postRev2026(served.url, message, { authorization: `Bearer ${options.token ?? OPEN}` });
  return res.json as Answer;
}

const toolNames = (answer: Answer) => (answer.result!.tools as Array<{ name: string }>).map((t) => t.name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-apps-"));
  const server = resolve("test/fixtures/servers/skills-server.mjs");
  const config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "servers:",
      "  alpha:",
      `    command: ${process.execPath}`,
      `    args: [${server}, --origin, alpha]`,
      "  beta:",
      `    command: ${process.execPath}`,
      `    args: [${server}, --origin, beta, --legacy]`,
      "profiles:",
      "  alpha-only: { servers: [alpha] }",
      "  open: {}",
      "tokens:",
      `  - { token: ${OPEN}, profile: open }`,
      `  - { token: ${ALPHA}, profile: alpha-only }`,
      `  - { token: ${SEARCH}, profile: open, mode: search }`,
      "",
    ].join("\n"),
  );
  served = await serveHttp(["--config", config]);
}, 60_000);
afterAll(async () => {
  await served?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe("MCP Apps through the gateway", () => {
  it("lists app tools with ui:// URIs naming their server, app-only tools only to a client that renders apps", async () => {
    const forApps = await call("tools/list", {}, { capabilities: APPS });
    const tools = forApps.result!.tools as Array<{ name: string; _meta?: Record<string, unknown> }>;
    expect(tools.map((t) => t.name)).toEqual([
      "alpha__show_report",
      "alpha__refresh_report",
      "beta__show_report",
      "beta__refresh_report",
    ]);
    expect(tools[0]!._meta).toEqual({
      ui: { resourceUri: "ui://alpha/report/view.html" },
      "ui/resourceUri": "ui://alpha/report/view.html",
    });
    expect(tools[3]!._meta).toEqual({
      ui: { resourceUri: "ui://beta/report/view.html", visibility: ["app"] },
    });
    const forModels = await call("tools/list");
    expect(toolNames(forModels)).toEqual(["alpha__show_report", "beta__show_report"]);
  });

  it("reads each app's HTML from its own server, its CSP passed through", async () => {
    const listed = await call("resources/list");
    const uris = (listed.result!.resources as Array<{ uri: string }>).map((r) => r.uri);
    expect(uris).toContain("ui://alpha/report/view.html");
    expect(uris).toContain("ui://beta/report/view.html");
    for (const server of ["alpha", "beta"]) {
      const read = await call("resources/read", { uri: `ui://${server}/report/view.html` });
      const [content] = read.result!.contents as Array<Record<string, unknown>>;
      expect(content).toMatchObject({
        uri: `ui://${server}/report/view.html`,
        mimeType: "text/html;profile=mcp-app",
        _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } },
      });
      expect(content!.text).toContain('request("tools/call", { name: "refresh_report"');
    }
  });

  it("rewrites the resource links of call results", async () => {
    const shown = await call(
      "tools/call",
      { name: "beta__show_report", arguments: {} },
      { capabilities: APPS },
    );
    expect(shown.result!.content).toEqual([
      { type: "text", text: "The report of beta" },
      {
        type: "resource_link",
        uri: "ui://beta/report/view.html",
        name: "report",
        mimeType: "text/html;profile=mcp-app",
      },
    ]);
  });

  it("declares the extension its servers declare", async () => {
    const discover = await call("server/discover");
    expect(
      (discover.result!.capabilities as { extensions?: Record<string, unknown> }).extensions,
    ).toHaveProperty("io.modelcontextprotocol/ui");
  });

  it("sends an app's unprefixed call to the one app server that has the tool, never a guess", async () => {
    const alone = await call("tools/call", { name: "refresh_report", arguments: {} }, { token: ALPHA });
    expect(alone.result!.content).toEqual([{ type: "text", text: "refreshed by alpha" }]);
    const both = await call("tools/call", { name: "refresh_report", arguments: {} });
    expect(both.error?.code).toBe(-32602);
    const prefixed = await call("tools/call", { name: "beta__refresh_report", arguments: {} });
    expect(prefixed.result!.content).toEqual([{ type: "text", text: "refreshed by beta" }]);
  });

  it("keeps tools only an app calls out of search mode", async () => {
    const found = await call(
      "tools/call",
      { name: "search_tools", arguments: { query: "report" } },
      { token: SEARCH },
    );
    const text = JSON.stringify(found.result!.content);
    expect(text).toContain("alpha__show_report");
    expect(text).not.toContain("refresh_report");
  });
});
