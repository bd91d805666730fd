/**
 * Composite tools on the hub's own path (the library's calls, as `mcplex call` and `chat` make
 * them), against the built-in workspace server: the config's checks, a reload that adds one,
 * and hostile arguments and scripts (docs/threat-model.md, "Composite tools").
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHub } from "../../src/assembly/build-hub.js";
import { parseConfig } from "../../src/config/parse-config.js";
import type { Hub } from "../../src/hub/hub.js";
import { applyConfig } from "../../src/servers/config-reloader.js";
import { issuesOf } from "../support/config-errors.js";

let dir: string;
let hub: Hub;
const configText = (composites: string) => `servers:
  ws:
    type: workspace
    root: ${JSON.stringify(dir)}
composites:
${composites}`;
const ECHO_ARGS = `  echo_args:
    description: Gives its arguments back.
    inputSchema: { type: object }
    script: |
      return { keys: Object.keys(args), proto: Object.getPrototypeOf(args) === Object.prototype, args };
  loop:
    description: Tries to call itself.
    inputSchema: { type: object }
    script: |
      return await tools.composite.loop({});
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-composite-hub-"));
  await writeFile(join(dir, "a.md"), "a\n");
  const built = await buildHub({
    config: parseConfig(configText(ECHO_ARGS), { source: "c.yaml", env: {} }),
    onRecordFailed: () => {},
  });
  hub = built.hub;
  await hub.start();
});
afterAll(async () => {
  await hub?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe("composite tools on the hub's path", () => {
  it("takes arguments as data: a __proto__ key stays a key, code-looking text stays text", async () => {
    const args = JSON.parse(
      '{"__proto__": {"polluted": true}, "x": "\\"); throw new Error(\\"escaped\\"); (\\""}',
    );
    const result = await hub.callTool("echo_args", args, {});
    expect(result.isError, JSON.stringify(result)).not.toBe(true);
    const value = JSON.parse((result.content[0] as { text: string }).text);
    expect(value.keys).toEqual(["__proto__", "x"]);
    expect(value.proto).toBe(true);
    expect(value.args.x).toBe('"); throw new Error("escaped"); ("');
  });

  it("cannot call a composite from a composite: no script recurses", async () => {
    const result = await hub.callTool("loop", {}, {});
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(
      /^composite tool "loop" failed: CODE_ERROR: /,
    );
  });

  it("lists a composite a reloaded config adds, and forgets one it drops", async () => {
    const before = parseConfig(configText(ECHO_ARGS), { source: "c.yaml", env: {} });
    const after = parseConfig(
      configText(
        `  list_root:\n    description: Lists the root.\n    inputSchema: { type: object }\n    script: |\n      return (await tools.ws.list_directory({})).entries.map((e) => e.name);\n`,
      ),
      { source: "c.yaml", env: {} },
    );
    const outcome = await applyConfig(hub, before, after);
    expect(outcome.composites).toBe(true);
    const names = hub.tools().map((t) => t.name);
    expect(names).toContain("list_root");
    expect(names).not.toContain("echo_args");
    const listed = await hub.callTool("list_root", {}, {});
    expect(JSON.parse((listed.content[0] as { text: string }).text)).toEqual(["a.md"]);
  });
});

describe("composites: in the config", () => {
  it("names each mistake with its path and the fix", () => {
    const issues = issuesOf(`servers:
  composite: { command: node }
composites:
  "bad name": { description: x, inputSchema: { type: object }, script: "return 1" }
  no_script: { description: x, inputSchema: { type: object } }
  no_schema: { description: x, script: "return 1" }
  wrong_schema: { description: x, inputSchema: { type: string }, script: "return 1" }
  no_description: { inputSchema: { type: object }, script: "return 1", descripton: x }
`);
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    expect(byPath["servers.composite"]).toMatch(/the name composites: are listed under/);
    expect(byPath['composites["bad name"]']).toMatch(/cannot be a tool name/);
    expect(byPath["composites.no_script.script"]).toMatch(/is required/);
    expect(byPath["composites.no_schema.inputSchema"]).toMatch(/is required/);
    expect(byPath["composites.wrong_schema.inputSchema.type"]).toMatch(/must be "object"/);
    expect(byPath["composites.no_description.description"]).toMatch(/is required/);
    expect(byPath["composites.no_description.descripton"]).toMatch(/did you mean "description"/);
  });

  it("keeps a script's ${...} as written: it is code", () => {
    const config = parseConfig(
      'servers: {}\ncomposites:\n  t:\n    description: x\n    inputSchema: { type: object }\n    script: "return `${args.a}`"\n',
      { source: "c.yaml", env: {} },
    );
    expect(config.composites!.t!.script).toBe("return `${args.a}`");
  });
});
