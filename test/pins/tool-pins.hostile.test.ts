import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readPinLock } from "../../src/pins/pin-lock-file.js";
import { diffTool } from "../../src/pins/tool-diff.js";
import { ToolPins } from "../../src/pins/tool-pins.js";
import { attackSize, attackTimeout, reportFigure } from "../support/hostile.js";

// A server chooses its tool names and writes its descriptions: neither may bend the pins.

let dir: string;
let lock: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-pins-hostile-"));
  lock = join(dir, "mcplex.lock.json");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A name servers may choose, held in a variable so that no code here means the accessor. */
const PROTO = "__proto__";

const tool = (name: string, description = "d"): Tool => ({
  name,
  description,
  inputSchema: { type: "object" },
});

describe("pins against a hostile server", () => {
  it("pins tools named __proto__, constructor and toString like any other", async () => {
    const names = ["__proto__", "constructor", "toString", "hasOwnProperty"];
    const first = await ToolPins.open(lock);
    // A never-seen name that Object.prototype has is new, not "changed".
    first.check(
      "__proto__",
      "hold-tools",
      names.map((n) => tool(n)),
    );
    await first.flush();
    const pins = await ToolPins.open(lock);
    expect(
      pins.check(
        "__proto__",
        "hold-tools",
        names.map((n) => tool(n)),
      ),
    ).toMatchObject({ changes: [] });
    const { tools, changes } = pins.check("__proto__", "hold-tools", [
      ...names.map((n) => tool(n, n === "__proto__" ? "changed" : "d")),
      tool("valueOf"),
    ]);
    expect(changes.map((c) => [c.tool, c.kind])).toEqual([
      ["__proto__", "changed"],
      ["valueOf", "added"],
    ]);
    expect(tools.map((t) => t.name)).toEqual(["constructor", "toString", "hasOwnProperty"]);
    expect((await pins.trust("__proto__")).sort()).toEqual(["__proto__", "valueOf"]);
    const written = await readPinLock(lock);
    expect(Object.keys(written.servers[PROTO]?.tools ?? {}).sort()).toEqual([
      "__proto__",
      "constructor",
      "hasOwnProperty",
      "toString",
      "valueOf",
    ]);
    expect(Object.getPrototypeOf(written.servers)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).fingerprint).toBeUndefined();
    expect(JSON.parse(await readFile(lock, "utf8")).servers[PROTO].tools[PROTO].tool.description).toBe(
      "changed",
    );
  });

  it("diffs a description of many lines changed throughout without quadratic blow-up", {
    timeout: attackTimeout(30_000, 120_000),
  }, () => {
    const lines = attackSize(3_000, 50_000);
    const before = Array.from({ length: lines }, (_, i) => `line ${i}`).join("\n");
    const after = Array.from({ length: lines }, (_, i) => (i % 7 === 0 ? `LINE ${i}` : `line ${i}`)).join(
      "\n",
    );
    const started = performance.now();
    const [change] = diffTool({ name: "t", description: before }, { name: "t", description: after });
    reportFigure("description diff", `${lines} lines in ${Math.round(performance.now() - started)} ms`);
    // Every line of both texts is shown, removed or added, whichever way the diff was made.
    const shown = change!.diff.split("\n");
    expect(shown.filter((l) => l.startsWith("+ ")).length).toBeGreaterThanOrEqual(Math.ceil(lines / 7));
    expect(shown.filter((l) => l.startsWith("+ LINE 0")).length).toBe(1);
  });
});
