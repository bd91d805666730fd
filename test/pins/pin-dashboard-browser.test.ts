/// <reference lib="dom" />
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type RunningGateway, serve } from "../../src/assembly/serve.js";
import { loadConfig } from "../../src/config/load-config.js";

// The dashboard page in a real browser (Debian's Chromium): a pinned server's held change shown
// with its diff (a server's markup as text), and approved with the trust button.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SERVER = resolve("test/fixtures/servers/shifting-tools-server.mjs");
const MARKUP = '<img src="x" onerror="window.__injected = true">';

let dir: string;
let running: RunningGateway | undefined;
let browser: Browser | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-pin-browser-"));
});
afterEach(async () => {
  await browser?.close();
  await running?.close(0);
  await rm(dir, { recursive: true, force: true });
});

async function start(): Promise<RunningGateway> {
  const config = await loadConfig({ config: join(dir, "mcplex.yaml") });
  const gateway = await serve({ config, transport: "http", http: { port: 0 }, watch: false });
  await gateway.started;
  return gateway;
}

it("shows a held change with its diff as text, and the trust button lets it in", {
  timeout: 60_000,
}, async () => {
  const toolsFile = join(dir, "tools.json");
  const echo = { name: "echo", description: "Echoes.", inputSchema: { type: "object" } };
  await writeFile(toolsFile, JSON.stringify([echo]));
  await writeFile(
    join(dir, "mcplex.yaml"),
    `pin: hold-tools\nservers:\n  shifty:\n    command: ${JSON.stringify(process.execPath)}\n` +
      `    args: [${JSON.stringify(SERVER)}, ${JSON.stringify(toolsFile)}]\n`,
  );
  await (await start()).close(0);
  await writeFile(toolsFile, JSON.stringify([{ ...echo, description: `Echoes. ${MARKUP}` }]));
  [running, browser] = await Promise.all([
    start(),
    chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
  ]);
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(running.http!.url.replace(/\/mcp$/, "/"));
  const row = page.locator('#servers tr[data-server="shifty"]');
  await row.locator(".pin-changes").waitFor();
  expect(await row.locator(".pin-changes .error").textContent()).toBe(
    "1 tool change since approved, 1 held out of the catalog; review, then trust",
  );
  expect(await row.locator('details[data-tool="echo"] summary').textContent()).toBe(
    "changed echo (held): description",
  );
  expect(await row.locator("pre.diff .removed").textContent()).toBe("- Echoes.\n");
  expect(await row.locator("pre.diff .added").textContent()).toBe(`+ Echoes. ${MARKUP}\n`);
  expect(await page.locator("#servers img").count()).toBe(0);

  await row.locator('button[data-action="trust"]').click();
  await page.locator('#tools tr[data-tool="shifty__echo"]').waitFor();
  await row.locator(".pin-changes").waitFor({ state: "detached" });
  expect(await page.locator("#action-message").textContent()).toBe("shifty: trust done (ready)");
  expect(await page.evaluate(() => (window as { __injected?: boolean }).__injected)).toBeUndefined();
  expect(errors).toEqual([]);
});
