/**
 * What a server says reaches the user's terminal as text, never as commands: `mcplex list`,
 * `mcplex call` and the error line show a server's ANSI escapes (clear screen, window title,
 * an OSC 52 clipboard write), carriage returns and bidi overrides as visible escapes, against a
 * real stdio server, through the built CLI.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { terminalJson, terminalText } from "../../src/cli/terminal-text.js";
import { runCli } from "../support/cli.js";

const SERVER = resolve("test/fixtures/servers/escape-server.mjs");
/** Every character a terminal acts on rather than shows (tab and newline are text). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the test.
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
let dir: string;
let config: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-escapes-"));
  config = join(dir, "mcplex.yaml");
  await writeFile(config, `servers:\n  esc:\n    command: ${process.execPath}\n    args: [${SERVER}]\n`);
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a server's text in the terminal", () => {
  it("lists a tool description with escapes shown, not obeyed", async () => {
    const { code, stdout } = await runCli(["list", "--config", config]);
    expect(code).toBe(0);
    expect(stdout).toContain("esc__paint");
    expect(stdout).not.toMatch(OBEYED);
    expect(stdout).toContain("Paints \\x1b[2J\\x1b]0;pwned\\x07");
  });

  it("prints a tool's result with escapes shown, not obeyed", async () => {
    const { code, stdout } = await runCli(["call", "esc__paint", "--config", config]);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(OBEYED);
    expect(stdout).toContain(
      "painted \\x1b[2J\\x1b]0;pwned\\x07\\x1b]52;c;cm0gLXJmIH4=\\x07\\x0dhidden\\u202egnp.exe",
    );
  });

  it("prints a server's error with escapes shown, not obeyed", async () => {
    const { code, stderr } = await runCli(["call", "esc__fail", "--config", config]);
    expect(code).toBe(1);
    expect(stderr).toContain("backend said \\x1b[2J");
    expect(stderr).not.toMatch(OBEYED);
  });

  it("keeps JSON output JSON: escapes stay JSON escapes", async () => {
    const { stdout } = await runCli(["call", "esc__paint", "--json", "--config", config]);
    expect(stdout).not.toMatch(OBEYED);
    const text = JSON.parse(stdout).content[0].text as string;
    expect(text).toContain("\u001b]52;c;");
    expect(text).toContain("\u202egnp.exe");
    const listed = await runCli(["list", "--json", "--config", config]);
    expect(listed.stdout).not.toMatch(OBEYED);
    expect(JSON.parse(listed.stdout).servers[0].tools[0].description).toContain("\u202e");
  });

  it("leaves text alone: tabs, newlines and any script", () => {
    const text = "a\tb\nc — 東京 ☕ مرحبا";
    expect(terminalText(text)).toBe(text);
    expect(terminalText("\u009b31m")).toBe("\\x9b31m");
    const value = { a: "x\u202ey\u2028z\u0085", n: [1, "東京"] };
    expect(JSON.parse(terminalJson(value))).toEqual(value);
    expect(terminalJson(value)).not.toMatch(OBEYED);
  });
});
