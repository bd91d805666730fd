/// <reference lib="dom" />
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { configOf, EVERYTHING, fixture, MEMORY, stdio } from "../support/config.js";
import { eventually, type InProcessGateway, startGateway } from "../support/gateway.js";

// The dashboard's tools, resources and prompts views and its server actions, in a real
// browser (Debian's Chromium) against real servers: server-everything (schemas with enums,
// numbers and booleans, progress, images, structuredContent, prompts with completion), the
// built-in workspace server (text and image resources), the SDK fixture (a slow tool that
// records its cancellation), server-memory started lazily, and the fixture again under
// `available:` (started on request from the page).

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ADMIN = "t-admin-0123456789ab";
const ECHO = "t-echo-0123456789abc";
/** A 2×2 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);
const SCREENSHOT = "docs/dashboard.png";

describe("the dashboard's tools, resources, prompts and server actions", { timeout: 90_000 }, () => {
  let gw: InProcessGateway;
  let browser: Browser;
  let page: Page;
  let root: string;
  const errors: string[] = [];
  const fxLog = () => {
    try {
      return readFileSync(join(root, "fx.log"), "utf8");
    } catch {
      return "";
    }
  };

  const tab = (name: string) => page.locator(`#tabs button[data-tab="${name}"]`).click();
  const pickTool = async (name: string) => {
    await tab("playground");
    await page.locator(`#pg-tool option[value="${name}"]`).waitFor({ state: "attached" });
    await page.locator("#pg-tool").selectOption(name);
  };
  const callAndWait = async () => {
    await page.locator("#pg-call").click();
    await page.locator("#pg-result .result, #pg-result [role=alert]").waitFor();
  };
  /** After {@link callAndWait}: the page's alert when the call failed, for the test's message. */
  const alertText = async () => {
    const alert = page.locator("#pg-result [role=alert]");
    return (await alert.count()) === 0 ? undefined : await alert.textContent();
  };

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), "mcplex-dashboard-")));
    writeFileSync(join(root, "notes.txt"), "hello from the workspace\n");
    writeFileSync(join(root, "pixel.png"), PNG);
    const workspace = {
      name: "files",
      transport: "workspace",
      root,
      allowWrite: true,
      rules: [],
      enabled: true,
      lazy: false,
      timeout: 10_000,
      startTimeout: 20_000,
      tools: {},
    } as unknown as ServerConfig;
    // The recorded tool lists of available servers go beside the secret store: the test's directory.
    vi.stubEnv("MCPLEX_HOME", root);
    [gw, browser] = await Promise.all([
      startGateway(
        configOf(
          [
            stdio("ev", EVERYTHING, ["stdio"]),
            workspace,
            fixture("fx", [], { env: { FIXTURE_LOG: join(root, "fx.log") } }),
            stdio("mem", MEMORY, [], { lazy: true, env: { MEMORY_FILE_PATH: join(root, "memory.jsonl") } }),
            // The conformance server: a tool with an x-mcp-header argument.
            stdio("conf", "node_modules/.bin/tsx", ["test/conformance/everything-server.ts", "--stdio"]),
          ],
          {
            available: [fixture("od", [], { env: { FIXTURE_ROLE: "on-demand" } })],
            profiles: { echo: { tools: { allow: ["fx__echo"] } } },
            tokens: [{ token: ADMIN }, { token: ECHO, profile: "echo" }],
          },
        ),
      ),
      chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
    ]);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${gw.origin}/dashboard`);
    await page.locator("#token").fill(ADMIN);
    await page.locator("#login button").click();
    await page.locator('#servers tr[data-server="ev"] .badge.ready').waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    vi.unstubAllEnvs();
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  it("calls a tool from a form made from its input schema, through /mcp like any client", async () => {
    await pickTool("ev__get-sum");
    const a = page.locator('#pg-form input[name="a"]');
    expect(await a.getAttribute("type")).toBe("number");
    expect(await page.locator('#pg-form [data-field="a"] abbr.required').count()).toBe(1);
    await a.fill("2");
    await page.locator('#pg-form input[name="b"]').fill("3.5");
    await callAndWait();
    expect(await page.locator("#pg-result .result .block.text").textContent()).toBe(
      "The sum of 2 and 3.5 is 5.5.",
    );
    expect(await page.locator("#pg-result .badge").first().textContent()).toBe("ok");

    // A required field left empty is named, and nothing is sent.
    await a.fill("");
    await page.locator("#pg-call").click();
    expect(await page.locator("#pg-error").textContent()).toBe("a is required");

    // The call went through the gateway's pipeline: the overview lists it.
    await tab("overview");
    await page.locator("#recent tbody tr[data-call]", { hasText: "ev__get-sum" }).waitFor();
    expect(errors).toEqual([]);
  });

  it("shows enums, booleans with defaults, images, structuredContent and isError", async () => {
    await pickTool("ev__get-annotated-message");
    const kind = page.locator('#pg-form select[name="messageType"]');
    expect(await kind.locator("option").allTextContents()).toEqual(["choose…", "error", "success", "debug"]);
    const image = page.locator('#pg-form input[type="checkbox"][name="includeImage"]');
    expect(await image.isChecked()).toBe(false); // its default
    await kind.selectOption({ label: "success" });
    await image.check();
    await callAndWait();
    const img = page.locator("#pg-result figure.image img");
    await img.waitFor();
    expect(await img.getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    expect(await img.evaluate((node: HTMLImageElement) => node.complete && node.naturalWidth > 0)).toBe(true);
    // The page as people see it after a call, for docs/guide/dashboard.md. The random port and the call's
    // time are written as a default gateway would show them, so that the committed image
    // changes when the page does, not on every run.
    await page.evaluate(() => {
      document.querySelector("#endpoint")!.textContent = "http://127.0.0.1:8420/mcp   ws://127.0.0.1:8420/ws";
      const took = document.querySelector("#pg-took")!;
      took.textContent = took.textContent!.replace(/\d+ ms$/, "12 ms");
    });
    await page.screenshot({ path: SCREENSHOT, animations: "disabled", caret: "hide" });
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(10_000);

    await pickTool("ev__get-structured-content");
    await page.locator('#pg-form select[name="location"]').selectOption({ label: "Chicago" });
    await callAndWait();
    const structured = JSON.parse((await page.locator("#pg-result pre.structured").textContent()) ?? "");
    expect(Object.keys(structured).sort()).toEqual(["conditions", "humidity", "temperature"]);

    await pickTool("fx__fail");
    expect(await page.locator("#pg-form").textContent()).toContain("This tool takes no arguments.");
    await callAndWait();
    expect(await page.locator("#pg-result .result.is-error .badge").textContent()).toBe("isError");
    expect(await page.locator("#pg-result .block.text").textContent()).toBe("this tool failed on purpose");
    expect(errors).toEqual([]);
  });

  it("builds arrays of nested objects and optional booleans into the arguments", async () => {
    await pickTool("files__edit_file");
    await page.locator('#pg-form [name="path"]').fill("notes.txt");
    await page.locator('#pg-form button[data-add="edits"]').click();
    await page.locator('#pg-form [name="edits.0.oldText"]').fill("hello");
    await page.locator('#pg-form [name="edits.0.newText"]').fill("goodbye");
    await page.locator('#pg-form button[data-add="edits"]').click();
    await page.locator('#pg-form [name="edits.1.oldText"]').fill("unused");
    // The second item goes again: removed items leave the arguments.
    await page.locator('#pg-form [data-field="edits"] .item').nth(1).locator("button").click();
    const dryRun = page.locator('#pg-form select[name="dryRun"]');
    expect(await dryRun.locator("option").allTextContents()).toEqual(["(none)", "true", "false"]);
    await dryRun.selectOption("true");
    await page.locator("#pg-mode").click();
    expect(JSON.parse(await page.locator("#pg-json").inputValue())).toEqual({
      path: "notes.txt",
      edits: [{ oldText: "hello", newText: "goodbye" }],
      dryRun: true,
    });
    await page.locator("#pg-mode").click();
    await callAndWait();
    // A failed call shows an alert instead (seen once in a clean-clone run): say what it said.
    expect(await alertText()).toBeUndefined();
    const structured = JSON.parse((await page.locator("#pg-result pre.structured").textContent()) ?? "");
    expect(structured).toMatchObject({ dryRun: true, edits: [{ line: 1, removedLines: 1, addedLines: 1 }] });
    expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("hello from the workspace\n");
    expect(errors).toEqual([]);
  });

  it("mirrors x-mcp-header arguments into Mcp-Param headers, which the gateway checks", async () => {
    await pickTool("conf__test_x_mcp_header");
    await page.locator('#pg-form [name="region"]').fill("eu-west ✓");
    await page.locator('#pg-form [name="count"]').fill("2");
    await callAndWait();
    expect(await page.locator("#pg-result .block.text").textContent()).toBe("region=eu-west ✓");
    // The same call without the header is refused: the page's client is what sends it.
    // (A string, so that the test runner leaves the page's dynamic imports alone.)
    const bare = await page.evaluate(`(async () => {
      const { McpClient } = await import("/dashboard/mcp-client.js");
      const { authHeaders } = await import("/dashboard/auth.js");
      const client = new McpClient({ headers: authHeaders });
      const args = { name: "conf__test_x_mcp_header", arguments: { region: "eu" } };
      return client.request("tools/call", args).then(() => "answered", (error) => error.message);
    })()`);
    expect(bare).toMatch(/^Header mismatch: .*Mcp-Param-Region/);
    expect(errors).toEqual([]);
  });

  it("edits the arguments as raw JSON, and switches between the JSON and the form", async () => {
    await pickTool("ev__echo");
    await page.locator('#pg-form [name="message"]').fill("from the form");
    await page.locator("#pg-mode").click();
    const json = page.locator("#pg-json");
    expect(await json.isVisible()).toBe(true);
    expect(JSON.parse(await json.inputValue())).toEqual({ message: "from the form" });

    await json.fill('{ "message": "from JSON" }');
    await page.locator("#pg-mode").click();
    expect(await page.locator('#pg-form [name="message"]').inputValue()).toBe("from JSON");

    await page.locator("#pg-mode").click();
    await json.fill('{ "message": ');
    await page.locator("#pg-mode").click();
    expect(await page.locator("#pg-error").textContent()).toMatch(/^cannot switch to the form: .*JSON/);
    expect(await json.isVisible()).toBe(true);

    // Arguments the form could not hold go as written.
    await json.fill('{ "message": "raw ✓", "extra": [1, {"deep": true}] }');
    await callAndWait();
    expect(await page.locator("#pg-result .block.text").textContent()).toBe("Echo: raw ✓");
    await page.locator("#pg-mode").click();
    expect(await page.locator("#pg-form").isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });

  it("shows a call's progress, and cancels it upstream", async () => {
    await pickTool("ev__trigger-long-running-operation");
    // The schema's defaults are filled in.
    expect(await page.locator('#pg-form [name="duration"]').inputValue()).toBe("10");
    expect(await page.locator('#pg-form [name="steps"]').inputValue()).toBe("5");
    await page.locator('#pg-form [name="duration"]').fill("1");
    await page.locator('#pg-form [name="steps"]').fill("4");
    await page.locator("#pg-call").click();
    await page.waitForFunction(
      () => (document.querySelector("#pg-progress") as HTMLProgressElement).value >= 1,
    );
    expect(await page.locator("#pg-progress").getAttribute("max")).toBe("4");
    await page.locator("#pg-result .result").waitFor();
    expect(await page.locator("#pg-result .block.text").textContent()).toContain(
      "Long running operation completed. Duration: 1 seconds, Steps: 4.",
    );
    expect(await page.locator("#pg-progress-text").textContent()).toBe("4 / 4");

    // The fixture's slow tool records when its server is told the call is cancelled.
    await pickTool("fx__slow");
    await page.locator("#pg-mode").click();
    await page.locator("#pg-json").fill('{ "ms": 60000, "step": 50, "tag": "from-dashboard" }');
    await page.locator("#pg-call").click();
    await page.waitForFunction(() =>
      /^\d+ · step \d+$/.test(document.querySelector("#pg-progress-text")?.textContent ?? ""),
    );
    expect(await page.locator("#pg-cancel").isEnabled()).toBe(true);
    await page.locator("#pg-cancel").click();
    await page.locator("#pg-cancelled").waitFor();
    await eventually(async () => (fxLog().includes("cancelled from-dashboard") ? true : undefined), {
      what: "the fixture recording the cancellation",
    });
    expect(await page.locator("#pg-cancel").isDisabled()).toBe(true);
    await page.locator("#pg-mode").click();
    expect(errors).toEqual([]);
  });

  it("lists resources and previews text and images", async () => {
    await tab("resources-panel");
    const notes = page.locator("#rs-list tr", { hasText: "notes.txt" });
    await notes.waitFor();
    await notes.locator("button").click();
    await page.locator("#rs-preview pre.text").waitFor();
    expect(await page.locator("#rs-preview pre.text").textContent()).toBe("hello from the workspace\n");

    await page.locator("#rs-list tr", { hasText: "pixel.png" }).locator("button").click();
    const img = page.locator("#rs-preview img.preview");
    await img.waitFor();
    expect(await img.evaluate((node: HTMLImageElement) => [node.naturalWidth, node.naturalHeight])).toEqual([
      2, 2,
    ]);

    // A resource link in a tool's result opens here.
    await pickTool("ev__get-resource-links");
    await page.locator('#pg-form [name="count"]').fill("1");
    await callAndWait();
    const link = page.locator("#pg-result .resource-link").first();
    const uri = await link.getAttribute("data-uri");
    expect(uri).toMatch(/^demo:\/\/resource\/dynamic\/(text|blob)\/\d+$/);
    await link.locator("button").click();
    await page.waitForFunction(
      (u) => document.querySelector("#rs-preview")?.getAttribute("data-uri") === u,
      uri,
    );
    expect(await page.locator("#resources-panel").isVisible()).toBe(true);
    expect(await page.locator("#rs-preview").textContent()).toContain("Resource 1");

    // A template is read by the URI filled in.
    await page
      .locator('#rs-list tr[data-template="demo://resource/dynamic/text/{resourceId}"] button')
      .click();
    await page.locator("#rs-uri").fill("demo://resource/dynamic/text/7");
    await page.locator("#rs-read button").click();
    await page.waitForFunction(
      () =>
        document.querySelector("#rs-preview")?.getAttribute("data-uri") === "demo://resource/dynamic/text/7",
    );
    expect(await page.locator("#rs-preview pre.text").textContent()).toContain("Resource 7");
    expect(errors).toEqual([]);
  });

  it("fills a prompt's arguments with the server's completions and shows its messages", async () => {
    await tab("prompts-panel");
    await page.locator('#pr-prompt option[value="ev__completable-prompt"]').waitFor({ state: "attached" });
    await page.locator("#pr-prompt").selectOption("ev__completable-prompt");
    await page.locator('#pr-args input[name="department"]').fill("Eng");
    await page.locator('ul[data-for="department"] button', { hasText: "Engineering" }).click();
    expect(await page.locator('#pr-args input[name="department"]').inputValue()).toBe("Engineering");
    // The second argument's completions depend on the first (sent as context).
    await page.locator('#pr-args input[name="name"]').fill("");
    await page.locator('#pr-args input[name="name"]').pressSequentially("A");
    await page.locator('ul[data-for="name"] button', { hasText: "Alice" }).click();
    await page.locator("#pr-get").click();
    const message = page.locator("#pr-result .message.user pre.text");
    await message.waitFor();
    expect(await message.textContent()).toBe("Please promote Alice to the head of the Engineering team.");
    expect(errors).toEqual([]);
  });

  it("restarts, disables, enables and starts servers from their rows", async () => {
    await tab("overview");
    const row = (name: string) => page.locator(`#servers tr[data-server="${name}"]`);
    const pid = gw.hub.servers().find((s) => s.name === "fx")?.pid;
    await row("fx").locator('button[data-action="restart"]').click();
    await page.waitForFunction(() =>
      /^fx: restart done \(ready\)$/.test(document.querySelector("#action-message")?.textContent ?? ""),
    );
    expect(gw.hub.servers().find((s) => s.name === "fx")?.pid).not.toBe(pid);

    await row("fx").locator('button[data-action="disable"]').click();
    await row("fx").locator(".badge.disabled").waitFor();
    expect(await row("fx").locator("button").allTextContents()).toEqual(["enable"]);
    await row("fx").locator('button[data-action="enable"]').click();
    await row("fx").locator(".badge.ready").waitFor();

    expect(await row("mem").locator(".badge").textContent()).toBe("idle");
    await row("mem").locator('button[data-action="start"]').click();
    await row("mem").locator(".badge.ready").waitFor();
    expect(await row("mem").locator("button").allTextContents()).toEqual(["restart", "disable"]);
    expect(errors).toEqual([]);
  });

  it("starts and stops a server under available: from the on-demand table", async () => {
    await tab("overview");
    const od = page.locator('#available tr[data-server="od"]');
    const row = page.locator('#servers tr[data-server="od"]');
    expect(await od.locator(".badge").textContent()).toBe("available");
    expect(await row.count()).toBe(0);
    await od.locator('button[data-action="start"]').click();
    await od.locator(".badge.connected").waitFor();
    // Running, it is a server like the others, stopped rather than disabled.
    await row.locator(".badge.ready").waitFor();
    expect(await row.locator("button").allTextContents()).toEqual(["restart", "stop"]);
    expect(await row.locator("td.detail").textContent()).toContain("on demand (available:)");
    const tools = gw.hub.tools().filter((t) => t.server === "od").length;
    expect(tools).toBeGreaterThan(0);
    expect(await od.locator("td.num").textContent()).toBe(String(tools));
    await page.locator('#tools tr[data-tool="od__echo"]').waitFor();

    await od.locator('button[data-action="stop"]').click();
    await od.locator(".badge.available").waitFor();
    await row.waitFor({ state: "detached" });
    await page.locator('#tools tr[data-tool="od__echo"]').waitFor({ state: "detached" });
    await page.waitForFunction(
      () => document.querySelector("#action-message")?.textContent === "od: stop done (stopped)",
    );
    // The tools it had stay known while it is stopped.
    expect(await od.locator("td.num").textContent()).toBe(String(tools));
    expect(errors).toEqual([]);
  });

  it("refuses a profile-bound token acting outside its profile, with 403 and the reason", async () => {
    const bound = await browser.newPage();
    try {
      await bound.goto(`${gw.origin}/dashboard`);
      await bound.locator("#token").fill(ECHO);
      await bound.locator("#login button").click();
      await bound.locator('#servers tr[data-server="fx"]').waitFor();
      expect(await bound.locator("#servers tbody tr[data-server]").count()).toBe(1);
      // Its profile may connect no available server: the on-demand table stays hidden.
      expect(await bound.locator("#available-section").isHidden()).toBe(true);
      const answer = await bound.evaluate(async (server) => {
        const token = sessionStorage.getItem("mcplex.dashboard.token");
        const res = await fetch(`/dashboard/servers/${server}/disable`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        });
        return { status: res.status, body: await res.json() };
      }, "ev");
      expect(answer).toEqual({
        status: 403,
        body: {
          error:
            'Forbidden: this token is bound to profile "echo", which has no server "ev"; ' +
            "a profile-bound token acts only on its profile's servers",
        },
      });
      expect(gw.hub.servers().find((s) => s.name === "ev")?.enabled).toBe(true);
      // Its playground offers its profile's tools only.
      await bound.locator('#tabs button[data-tab="playground"]').click();
      await bound.locator('#pg-tool option[value="fx__echo"]').waitFor({ state: "attached" });
      expect(await bound.locator("#pg-tool option").count()).toBe(2);
    } finally {
      await bound.close();
    }
  });

  it("draws each server's latency, with points once it has answered calls", async () => {
    await tab("overview");
    const chart = page.locator('#latency .latency-row[data-server="ev"] svg.sparkline');
    await chart.waitFor();
    await page.waitForFunction(
      () => document.querySelectorAll('#latency .latency-row[data-server="ev"] circle.point').length >= 2,
    );
    const title = await chart.locator(".p95 circle.point title").first().textContent();
    expect(title).toMatch(/p95 [\d.]+ ms over \d+ calls?$/);
    expect(await page.locator('#latency .latency-row[data-server="mem"]').textContent()).toContain(
      "no calls",
    );
    expect(errors).toEqual([]);
  });
});
