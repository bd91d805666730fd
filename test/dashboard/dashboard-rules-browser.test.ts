/// <reference lib="dom" />
/**
 * The dashboard's "Rules in force" and each call's decisions, in a real browser (Debian's
 * Chromium) against `serve()` over HTTP with a policy, a guardrail, a quota and a server's
 * overrides; the calls are made by the SDK client: one a rule denies, one a guardrail rewrites,
 * one over the quota.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { parseConfig } from "../../src/config/parse-config.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

describe("the dashboard's rules and decisions", { timeout: 60_000 }, () => {
  let running: RunningGateway;
  let browser: Browser;
  let page: Page;
  let dir: string;
  let client: Client;
  const errors: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-dash-rules-"));
    await writeFile(join(dir, "contacts.md"), "write to ada@example.com\n");
    const config = parseConfig(
      `servers:
  ws:
    type: workspace
    root: ${JSON.stringify(dir)}
    allowWrite: true
    overrides:
      read_file: { description: { append: "Contacts are redacted." } }
policies:
  - name: no-secret-files
    when: 'request.tool == "ws__write_file" && request.arguments.path.contains("secret")'
    effect: deny
    message: no secret files
guardrails:
  - { guardrail: pii, tools: ["ws__read_file"] }
quotas:
  - { name: reads, tools: ["ws__read_file"], calls: 2, window: 1h }
`,
      { source: "rules.yaml", env: {} },
    );
    [running, browser] = await Promise.all([
      serve({ config, transport: "http", http: { host: "127.0.0.1", port: 0 }, watch: false }),
      chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
    ]);
    await running.started;
    client = new Client({ name: "rules-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(running.http!.url)));
    page = await browser.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(new URL("/dashboard", running.http!.url).href);
    await page.locator('#servers tr[data-server="ws"] .badge.ready').waitFor();
  });
  afterAll(async () => {
    await client?.close();
    await browser?.close();
    await running?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("lists the policies, guardrails, quotas and overrides in force", async () => {
    await page.locator("#rules-section").waitFor();
    const row = (rule: string) => page.locator(`#rules tr[data-rule="${rule}"]`);
    expect(await row("policy:no-secret-files").locator("td").nth(2).textContent()).toBe("deny");
    expect(await row("policy:no-secret-files").locator("code").textContent()).toContain("ws__write_file");
    expect(await row("guardrail:pii").locator("td.detail").textContent()).toBe(
      "tools ws__read_file; response",
    );
    expect(await row("quota:reads").locator("td.detail").textContent()).toBe(
      "2 per 3600 s; tools ws__read_file",
    );
    expect(await row("overrides:ws").locator("td.detail").textContent()).toBe("1 entry");
    expect(errors).toEqual([]);
  });

  it("shows each call's decisions: denied, rewritten, refused over the quota", async () => {
    await client
      .callTool({ name: "ws__write_file", arguments: { path: "secret.md", content: "x" } })
      .catch(() => undefined);
    const read = await client.callTool({ name: "ws__read_file", arguments: { path: "contacts.md" } });
    expect(JSON.stringify(read.content)).not.toContain("ada@example.com");
    await client.callTool({ name: "ws__read_file", arguments: { path: "contacts.md" } });
    await expect(
      client.callTool({ name: "ws__read_file", arguments: { path: "contacts.md" } }),
    ).rejects.toThrow(/quota "reads"/);
    const decisions = page.locator("#recent tbody tr[data-call] .decisions");
    await page.waitForFunction(
      () => document.querySelectorAll("#recent tbody tr[data-call] .decisions").length === 4,
    );
    const texts = await decisions.allTextContents();
    // Newest first.
    expect(texts[0]).toBe("quota reads refused");
    expect(texts[1]).toBe("guardrail pii rewrote");
    expect(texts[2]).toBe("guardrail pii rewrote");
    expect(texts[3]).toBe("policy no-secret-files deny");
    const refused = page.locator("#recent tbody tr[data-call]").first();
    expect(await refused.locator(".badge").first().textContent()).toBe("error");
    expect(await refused.locator("td.error").textContent()).toMatch(/^quota "reads" allows 2 calls per 1h/);
    expect(errors).toEqual([]);
  });
});
