import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolDeclarations } from "../../src/code-mode/index.js";
import type { CodeTool } from "../../src/code-mode/tool-bindings.js";
import { type HubTools, startHubTools } from "./hub-tools.js";

const tool = (
  name: string,
  inputSchema: Record<string, unknown>,
  extra: Partial<CodeTool> = {},
): CodeTool => ({
  server: "demo",
  name,
  exposed: `demo__${name}`,
  inputSchema,
  ...extra,
});

describe("toolDeclarations", () => {
  it("types required and optional members, enums, arrays, nested objects and JSDoc", () => {
    const text = toolDeclarations([
      tool(
        "search-issues",
        {
          type: "object",
          properties: {
            q: { type: "string", description: "Query; may not contain */ safely" },
            state: { type: "string", enum: ["open", "closed"], default: "open" },
            labels: { type: "array", items: { type: "string" } },
            page: { type: ["integer", "null"] },
            "sort-by": { type: "object", properties: { field: { const: "created" } }, required: ["field"] },
          },
          required: ["q"],
        },
        {
          description: "Search issues.\nSecond line.",
          outputSchema: { type: "object", properties: { total: { type: "number" } } },
        },
      ),
    ]);
    expect(text).toContain("declare const tools: {");
    expect(text).toContain("  demo: {");
    expect(text).toContain("     * Search issues.\n     * Second line.");
    expect(text).toContain("search_issues(args: {");
    expect(text).toContain("/** Query; may not contain *\\/ safely */");
    expect(text).toContain("q: string;");
    expect(text).toContain('state?: "open" | "closed";');
    expect(text).toContain('@default "open"');
    expect(text).toContain("labels?: string[];");
    expect(text).toContain("page?: number | null;");
    expect(text).toContain('"sort-by"?: {');
    expect(text).toContain('field: "created";');
    expect(text).toContain("}): Promise<{\n      total?: number;\n    }>;");
  });

  it("says unknown for what a type cannot express, and stops at recursive refs", () => {
    const text = toolDeclarations([
      tool("tree", {
        type: "object",
        $defs: {
          node: {
            type: "object",
            properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } },
          },
        },
        properties: {
          root: { $ref: "#/$defs/node" },
          remote: { $ref: "https://example.com/schema.json" },
          anything: {},
          either: { anyOf: [{ type: "string" }, { type: "number" }] },
          pair: { type: "array", prefixItems: [{ type: "string" }, { type: "boolean" }], items: false },
          map: { type: "object", additionalProperties: { type: "number" } },
        },
      }),
    ]);
    expect(text).toContain("tree(args?: {");
    expect(text).toMatch(/root\?: \{\n\s+children\?: unknown\[\];/);
    expect(text).toContain("remote?: unknown;");
    expect(text).toContain("anything?: unknown;");
    expect(text).toContain("either?: string | number;");
    expect(text).toContain("pair?: [string, boolean];");
    expect(text).toContain("map?: Record<string, number>;");
  });

  it("gives the same text whatever the order of the tools", () => {
    const tools = [
      tool("b", { type: "object" }),
      tool("a", { type: "object" }),
      { ...tool("c", {}), server: "alpha" },
    ];
    expect(toolDeclarations(tools)).toBe(toolDeclarations([...tools].reverse()));
    expect(toolDeclarations(tools).indexOf("alpha")).toBeLessThan(toolDeclarations(tools).indexOf("demo"));
  });
});

describe("declarations of real servers' tools", () => {
  let hub: HubTools;
  const dir = mkdtempSync(join(tmpdir(), "mcplex-declarations-"));
  beforeAll(async () => {
    hub = await startHubTools({ filesystem: true });
  });
  afterAll(async () => {
    await hub?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("compiles with tsc for server-everything and server-filesystem, and types wrong calls as errors", () => {
    const text = toolDeclarations(hub.tools);
    expect(text).toContain("everything: {");
    expect(text).toContain("filesystem: {");
    expect(text).toContain("read_text_file(args: {");
    writeFileSync(join(dir, "tools.d.ts"), text);
    writeFileSync(
      join(dir, "script.ts"),
      `export async function main() {
  const echoed = await tools.everything.echo({ message: "hi" });
  const listing = await tools.filesystem.list_directory({ path: "/tmp" });
  const sum = await tools.everything.get_sum({ a: 1, b: 2 });
  // @ts-expect-error: message is required
  await tools.everything.echo({});
  // @ts-expect-error: a is a number
  await tools.everything.get_sum({ a: "1", b: 2 });
  // @ts-expect-error: no such tool
  await tools.everything.nope();
  return [echoed, listing.content, sum];
}
`,
    );
    const tsc = resolve("node_modules/.bin/tsc");
    const run = () =>
      execFileSync(
        tsc,
        [
          "--noEmit",
          "--strict",
          "--target",
          "es2022",
          "--module",
          "esnext",
          "--lib",
          "es2023",
          "--types",
          "",
          "tools.d.ts",
          "script.ts",
        ],
        { cwd: dir, encoding: "utf8", stdio: "pipe" },
      );
    expect(run).not.toThrow();
  });
});
