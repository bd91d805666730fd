/// <reference lib="dom" />
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configOf, fixture, stdio } from "../support/config.js";
import {
  type InProcessGateway,
  postRev2026,
  rev2026Request,
  slowCallUntilAborted,
  startGateway,
} from "../support/gateway.js";

// The dashboard page in a real browser (Debian's Chromium, installed by
// scripts/ensure-chromium.mjs), against a gateway with real upstreams: what a person sees.

/** What test/fixtures/servers/html-tool-server.mjs puts in its tool's description. */
const MARKUP = '<img src="x" onerror="window.__injected = true"><b>bold</b>';
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

describe("the dashboard page", { timeout: 60_000 }, () => {
  let gw: InProcessGateway;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    [gw, browser] = await Promise.all([
      startGateway(
        configOf([
          fixture("fx"),
          stdio("html", process.execPath, ["test/fixtures/servers/html-tool-server.mjs"]),
          stdio("broken", "/nonexistent/mcp-server"),
        ]),
      ),
      chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
    ]);
    page = await browser.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${gw.origin}/`);
    await page.locator('#servers tr[data-server="fx"] .badge.ready').waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it("shows each server's state, and a failed one's error and hint", async () => {
    expect(page.url()).toBe(`${gw.origin}/dashboard`);
    expect(await page.locator("#health").textContent()).toBe("degraded");
    const broken = page.locator('#servers tr[data-server="broken"]');
    expect(await broken.locator(".badge").textContent()).toMatch(/failed|reconnecting/);
    expect(await broken.locator("td.detail").textContent()).toContain(
      'command "/nonexistent/mcp-server" was not found',
    );
    expect(await page.locator("#endpoint").textContent()).toContain(gw.url);
    expect(errors).toEqual([]);
  });

  it("lists the tools, filters them, and shows a server's markup as text", async () => {
    await page.locator('#tools tr[data-tool="fx__echo"]').waitFor();
    const markup = page.locator('#tools tr[data-tool="html__markup"] td').nth(2);
    expect(await markup.textContent()).toBe(MARKUP);
    expect(await page.locator("#tools img, #tools b").count()).toBe(0);
    expect(await page.evaluate(() => (window as { __injected?: boolean }).__injected)).toBeUndefined();

    await page.locator("#tool-filter").fill("waits ms");
    await page.waitForFunction(() => document.querySelectorAll("#tools tbody tr[data-tool]").length === 1);
    expect(await page.locator("#tools tbody tr[data-tool]").getAttribute("data-tool")).toBe("fx__slow");
    expect(await page.locator("#tools-count").textContent()).toMatch(/^\(1 of \d+\)$/);
    await page.locator("#tool-filter").fill("");
  });

  it("shows calls while they run and after they end, live", async () => {
    const slow = slowCallUntilAborted(gw.url, 1);
    const running = page.locator("#active tbody tr[data-call]", { hasText: "fx__slow" });
    await running.waitFor();
    expect(await running.locator("td").nth(4).textContent()).toBe("fx");
    // Who called: no credential is asked here, so the client's address, and its own name.
    expect(await running.locator("td.caller").textContent()).toBe("127.0.0.1 · gateway-test");

    await postRev2026(gw.url, rev2026Request(2, "tools/call", { name: "html__markup", arguments: {} }));
    const failed = page.locator("#recent tbody tr[data-call]", { hasText: "html__markup" });
    await failed.waitFor();
    expect(await failed.locator(".badge").textContent()).toBe("tool_error");
    expect(await failed.locator("td.caller").textContent()).toBe("127.0.0.1 · gateway-test");
    expect(await failed.locator("td.detail").textContent()).toBe(MARKUP);
    expect(await page.locator("#recent img").count()).toBe(0);

    slow.giveUp();
    await expect(slow.answer).rejects.toThrow();
    await page.locator("#recent tbody tr[data-call]", { hasText: "fx__slow" }).waitFor();
    await page.locator("#active tbody tr.empty").waitFor();

    // Finished calls update the servers' counters too.
    await page.waitForFunction(
      () => document.querySelectorAll('#servers tr[data-server="html"] td')[5]?.textContent === "1",
    );

    // "errors only" hides the calls that went well.
    await postRev2026(
      gw.url,
      rev2026Request(3, "tools/call", { name: "fx__echo", arguments: { message: "hi" } }),
    );
    const ok = page.locator("#recent tbody tr[data-call]", { hasText: "fx__echo" });
    await ok.waitFor();
    expect(await ok.locator(".badge").textContent()).toBe("ok");
    await page.locator("#errors-only").check();
    await ok.waitFor({ state: "detached" });
    expect(await page.locator("#recent tbody tr[data-call]", { hasText: "html__markup" }).count()).toBe(1);
    await page.locator("#errors-only").uncheck();
    await ok.waitFor();
    expect(errors).toEqual([]);
  });

  it("follows a server that dies and comes back, without a reload", async () => {
    const pid = gw.hub.servers().find((s) => s.name === "fx")?.pid;
    expect(pid).toBeTypeOf("number");
    process.kill(pid!, "SIGKILL");
    await page.locator('#servers tr[data-server="fx"] .badge:not(.ready)').waitFor();
    await page.locator('#servers tr[data-server="fx"] .badge.ready').waitFor();
    const detail = await page.locator('#servers tr[data-server="fx"] td.detail').textContent();
    expect(detail).not.toContain(`pid ${pid}`);
    expect(errors).toEqual([]);
  });

  it("asks for a token when the gateway wants one, and refuses a wrong one", async () => {
    const front = await gw.addFront({ tokens: [{ token: "dash-token-0123456789" }] });
    const locked = await browser.newPage();
    try {
      await locked.goto(front.dashboardUrl!);
      await locked.locator("#login").waitFor();
      expect(await locked.locator("#main").isHidden()).toBe(true);
      await locked.locator("#token").fill("wrong");
      await locked.locator("#login button").click();
      await locked.waitForFunction(() => document.querySelector("#login-error")?.textContent !== "");
      expect(await locked.locator("#login-error").textContent()).toMatch(/token/i);
      await locked.locator("#token").fill("dash-token-0123456789");
      await locked.locator("#login button").click();
      await locked.locator('#servers tr[data-server="fx"]').waitFor();
      expect(await locked.locator("#login").isHidden()).toBe(true);
    } finally {
      await locked.close();
      await front.close();
    }
  });
});
