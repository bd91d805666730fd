import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { Catalog } from "../../src/catalog/index.js";
import { listedTool, sentArguments } from "../../src/catalog/tool-overrides.js";
import { mcplexDocument } from "../../src/config/mcplex-document.js";
import { parseConfig } from "../../src/config/parse-config.js";
import { issuesOf } from "../support/config-errors.js";
import { tool } from "./fixtures.js";

const search = tool("search_code", {
  title: "Search",
  description: "Searches code.",
  annotations: { readOnlyHint: false, openWorldHint: true },
  inputSchema: {
    type: "object",
    properties: { q: { type: "string" }, org: { type: "string" }, per_page: { type: "number" } },
    required: ["q", "org", "per_page"],
  },
});

function github(overrides: Record<string, unknown>) {
  return { server: "github", state: "ready" as const, tools: [search, tool("get_me")], overrides } as never;
}

describe("tool overrides of a server", () => {
  const catalog = Catalog.build([
    github({
      search_code: {
        name: "find_code",
        title: "Find code",
        description: { append: "Only acme's repositories." },
        annotations: { readOnlyHint: true },
        arguments: { org: { value: "acme" }, per_page: { default: 20 } },
      },
      "*": { annotations: { idempotentHint: true } },
    }),
  ]);
  const found = catalog.resolveTool("github__find_code")!;

  it("renames under the server's prefix and the old name no longer resolves", () => {
    expect(catalog.tools().map((t) => t.name)).toEqual(["github__find_code", "github__get_me"]);
    expect(catalog.resolveTool("github__search_code")).toBeUndefined();
    expect(found.originalName).toBe("search_code");
    expect(found.localName).toBe("find_code");
    expect(found.tool).toBe(search);
  });

  it("shows the new title, the appended description and the merged annotations, in order", () => {
    expect(found.title).toBe("Find code");
    expect(found.description).toBe("Searches code.\n\nOnly acme's repositories.");
    // The glob entry comes after the named one: both apply.
    expect(found.annotations).toEqual({ readOnlyHint: true, openWorldHint: true, idempotentHint: true });
    expect(catalog.resolveTool("github__get_me")!.annotations).toEqual({ idempotentHint: true });
  });

  it("hides a fixed argument from the schema and shows a default as optional", () => {
    expect(found.inputSchema).toEqual({
      type: "object",
      properties: { q: { type: "string" }, per_page: { type: "number", default: 20 } },
      required: ["q"],
    });
    const listed = listedTool(found);
    expect(listed.name).toBe("github__find_code");
    expect(listed.inputSchema).toBe(found.inputSchema);
    expect(listed.description).toBe(found.description);
  });

  it("sends the fixed value always and the default only when the caller gives none", () => {
    expect(sentArguments(found, { q: "x" })).toEqual({ q: "x", org: "acme", per_page: 20 });
    expect(sentArguments(found, { q: "x", per_page: 5, org: "evil" })).toEqual({
      q: "x",
      org: "acme",
      per_page: 5,
    });
    const plain = catalog.resolveTool("github__get_me")!;
    const args = { a: 1 };
    expect(sentArguments(plain, args)).toBe(args);
  });

  it("replaces a description given as text", () => {
    const other = Catalog.build([github({ search_code: { description: "New." } })]);
    expect(other.resolveTool("github__search_code")!.description).toBe("New.");
  });
});

describe("tool overrides of a profile", () => {
  const profiles = {
    contractors: {
      tools: {},
      overrides: {
        github__search_code: {
          name: "search",
          description: { append: "Public repositories only." },
          arguments: { visibility: { value: "public" } },
        },
      },
    },
    clash: { tools: {}, overrides: { github__search_code: { name: "github__get_me" } } },
  } as never;
  const catalog = Catalog.build([github({ search_code: { arguments: { org: { value: "acme" } } } })], {
    profiles,
  });

  it("applies on top of the server's, under the profile's own name", () => {
    expect(catalog.tools("contractors").map((t) => t.name)).toEqual(["search", "github__get_me"]);
    const found = catalog.resolveTool("search", "contractors")!;
    expect(found.localName).toBe("search");
    expect(found.argumentOverrides).toEqual({ fixed: { org: "acme", visibility: "public" } });
    expect(Object.keys(found.inputSchema.properties ?? {})).toEqual(["q", "per_page"]);
    expect(catalog.resolveTool("github__search_code", "contractors")).toBeUndefined();
    // Without the profile, the server's overrides only.
    expect(catalog.resolveTool("github__search_code")!.description).toBe("Searches code.");
  });

  it("does not make a rename that takes a name the profile shows, and reports it", () => {
    expect(catalog.tools("clash").map((t) => t.name)).toEqual(["github__search_code", "github__get_me"]);
    expect(catalog.resolveTool("github__get_me", "clash")!.originalName).toBe("get_me");
    expect(catalog.collisions().map((c) => c.name)).toEqual(["github__get_me (profile clash)"]);
  });
});

describe("overrides: in the config", () => {
  it("reads a server's and a profile's, with ${VAR} in values", () => {
    const config = parseConfig(
      `servers:
  gh:
    command: node
    overrides:
      search_code:
        name: find_code
        arguments: { org: { value: "\${ORG}" }, per_page: { default: 20 } }
      "*": { description: { append: "(GitHub)" } }
profiles:
  dev:
    overrides:
      gh__find_code: { title: Find }
`,
      { source: "mcplex.yaml", env: { ORG: "acme" } },
    );
    expect(config.servers[0]!.overrides).toEqual({
      search_code: { name: "find_code", arguments: { org: { value: "acme" }, per_page: { default: 20 } } },
      "*": { description: { append: "(GitHub)" } },
    });
    expect(config.profiles.dev!.overrides).toEqual({ gh__find_code: { title: "Find" } });
  });

  it("names each mistake with its path and the fix", () => {
    const issues = issuesOf(`servers:
  gh:
    command: node
    overrides:
      "search_*": { name: find }
      get_me: { name: "get me", descripton: x }
      list: { arguments: { a: 1, b: { value: 1, default: 2 }, c: {} } }
      other: { description: { add: x } }
`);
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i.message]));
    expect(byPath[`servers.gh.overrides["search_*"].name`]).toMatch(/renames one tool only/);
    expect(byPath["servers.gh.overrides.get_me.name"]).toMatch(/"get me" cannot be a tool name/);
    expect(byPath["servers.gh.overrides.get_me.descripton"]).toMatch(/did you mean "description"/);
    expect(byPath["servers.gh.overrides.list.arguments.a"]).toMatch(/must be \{ value/);
    expect(byPath["servers.gh.overrides.list.arguments.b"]).toMatch(/takes value or default, not both/);
    expect(byPath["servers.gh.overrides.list.arguments.c"]).toMatch(/needs value/);
    expect(byPath["servers.gh.overrides.other.description.add"]).toMatch(/unknown key/);
  });

  it("survive being written back as an mcplex file (config convert), with pin and guardrails", () => {
    const text = `servers:
  gh:
    command: node
    pin: hold-tools
    overrides:
      search_code: { name: find_code, arguments: { org: { value: acme } } }
profiles:
  dev:
    overrides:
      gh__find_code: { description: { append: more } }
guardrails:
  - guardrail: size
    maxBytes: 1000
`;
    const config = parseConfig(text, { source: "o.yaml", env: {} });
    const again = parseConfig(stringify(mcplexDocument(config)), { source: "p.yaml", env: {} });
    expect(again.servers[0]!.overrides).toEqual(config.servers[0]!.overrides);
    expect(again.servers[0]!.pin).toBe("hold-tools");
    expect(again.profiles).toEqual(config.profiles);
    expect(again.guardrails).toEqual(config.guardrails);
  });
});
