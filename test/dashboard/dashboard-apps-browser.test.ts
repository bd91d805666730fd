/// <reference lib="dom" />
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appFramePolicy } from "../../src/ext/apps/app-frame.js";
import { type ServeProcess, serveHttp } from "../support/gateway.js";

// MCP Apps in the dashboard's playground, in Debian's Chromium, behind `mcplex serve --http`:
// two servers with an app each (the skills fixture as "alpha", 2026, and "beta", 2025). Each
// app shows the server named in the tool result it is handed, then calls its server's
// `refresh_report` by its own, unprefixed name: both servers have one, so only a host that
// knows which server the app came from can send it to the right one.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

describe("the playground renders a tool's MCP App", { timeout: 90_000 }, () => {
  let served: ServeProcess;
  let dir: string;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-apps-browser-"));
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
        "",
      ].join("\n"),
    );
    [served, browser] = await Promise.all([
      serveHttp(["--config", config]),
      chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
    ]);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(`${served.origin}/dashboard`);
    await page.locator('#servers tr[data-server="beta"] .badge.ready').waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  const callApp = async (tool: string) => {
    await page.locator('#tabs button[data-tab="playground"]').click();
    await page.locator(`#pg-tool option[value="${tool}"]`).waitFor({ state: "attached" });
    await page.locator("#pg-tool").selectOption(tool);
    await page.locator("#pg-call").click();
    await page.locator("#pg-app iframe").waitFor();
    return page.frameLocator("#pg-app iframe");
  };

  it("runs each app with its own server behind it, the app's unprefixed calls going to that server", async () => {
    for (const server of ["beta", "alpha"]) {
      const app = await callApp(`${server}__show_report`);
      await expect.poll(() => app.locator("#origin").textContent()).toBe(`report of ${server}`);
      await expect.poll(() => app.locator("#refreshed").textContent()).toBe(`refreshed by ${server}`);
    }
    expect(errors).toEqual([]);
  });

  it("sandboxes the app: an opaque origin, no way into the page", async () => {
    await callApp("alpha__show_report");
    const frame = page.locator("#pg-app iframe");
    expect(await frame.getAttribute("sandbox")).toBe("allow-scripts allow-forms");
    const inner = page.frames().find((f) => f !== page.mainFrame())!;
    const seen = await inner.evaluate(() => {
      let parentDocument: string;
      try {
        parentDocument = String(window.parent.document.title);
      } catch {
        parentDocument = "blocked";
      }
      let storage: string;
      try {
        storage = String(window.sessionStorage.length);
      } catch {
        storage = "blocked";
      }
      return { origin: window.origin, parentDocument, storage };
    });
    expect(seen).toEqual({ origin: "null", parentDocument: "blocked", storage: "blocked" });
    // Through the bridge it reaches its own server only, whatever name or URI it asks for.
    const ask = (method: string, params: Record<string, unknown>) =>
      inner.evaluate(
        ([m, p]) =>
          new Promise<{ error?: { code: number; message: string } }>((done) => {
            const id = `probe-${Math.random()}`;
            addEventListener("message", (event) => {
              if (event.data?.id === id) done(event.data);
            });
            parent.postMessage({ jsonrpc: "2.0", id, method: m, params: p }, "*");
          }),
        [method, params] as const,
      );
    expect((await ask("tools/call", { name: "beta__refresh_report", arguments: {} })).error).toEqual({
      code: -32602,
      message: "the app may call only the tools of alpha: beta__refresh_report is not one",
    });
    expect((await ask("resources/read", { uri: "ui://beta/report/view.html" })).error?.code).toBe(-32602);
    expect((await ask("sampling/createMessage", {})).error?.code).toBe(-32601);
    // The frame's policy is the app's CSP: no origin asked for, so no network at all.
    const policy = await page.evaluate(async () => {
      const response = await fetch("/dashboard/app-frame");
      return response.headers.get("content-security-policy");
    });
    expect(policy).toContain("connect-src 'none'");
    expect(policy).toContain("frame-ancestors 'self'");
  });
});

describe("the app frame's policy", () => {
  it("allows the origins an app's _meta.ui.csp names, and drops anything that is not an origin", () => {
    const policy = appFramePolicy({
      connectDomains: ["https://api.example.com", "https://x.example; script-src *"],
      resourceDomains: ["https://*.cdn.example", "javascript:alert(1)"],
      frameDomains: "https://not-a-list.example",
    });
    expect(policy).toContain("connect-src https://api.example.com;");
    expect(policy).toContain("script-src 'unsafe-inline' https://*.cdn.example;");
    expect(policy).toContain("frame-src 'none'");
    expect(policy).not.toContain("script-src *");
    expect(policy).not.toContain("javascript:");
  });
});
