import { describe, expect, it } from "vitest";
import { summarize, ToolIndex } from "../../src/catalog/tool-index.js";
import { SYNONYMS, splitWords, valueKinds } from "../../src/catalog/tool-vocabulary.js";
import { labelledRequests, recall, recordedCatalog } from "../fixtures/catalog/tool-catalog.js";

const object = (properties: Record<string, unknown>) => ({ type: "object", properties });

const github = [
  {
    name: "github__search_issues",
    server: "github",
    originalName: "search_issues",
    description: "Search for issues and pull requests across GitHub repositories.\nUses the search API.",
    inputSchema: object({ q: { type: "string", description: "Search query" } }),
  },
  {
    name: "github__create_pull_request",
    server: "github",
    originalName: "create_pull_request",
    description: "Create a new pull request in a GitHub repository",
    inputSchema: object({ head: { type: "string" }, base: { type: "string" } }),
  },
];
const fs = [
  {
    name: "fs__readTextFile",
    server: "fs",
    originalName: "readTextFile",
    description: "Read the complete contents of a file as text",
    inputSchema: object({ path: { type: "string" } }),
  },
  {
    name: "fs__list_directory",
    server: "fs",
    originalName: "list_directory",
    title: "Directory listing",
    description: "Get a detailed listing of all files and directories in a specified path",
    inputSchema: object({ path: { type: "string", description: "Absolute path to list" } }),
  },
];

const names = (hits: Array<{ name: string }>) => hits.map((hit) => hit.name);

describe("splitWords", () => {
  it("splits names on underscores, hyphens, dots and camelCase humps", () => {
    expect(splitWords("github__search_issues")).toEqual(["github", "search", "issues"]);
    expect(splitWords("get-file.contents")).toEqual(["get", "file", "contents"]);
    expect(splitWords("getFileContents HTTPServer v2Api")).toEqual([
      "get",
      "File",
      "Contents",
      "HTTP",
      "Server",
      "v2",
      "Api",
    ]);
  });
});

describe("valueKinds", () => {
  it("replaces URLs, file names and email addresses in a request by their kind", () => {
    expect(valueKinds("open https://news.ycombinator.com now")).toBe("open  url  now");
    expect(valueKinds("map docs.example.com")).toBe("map  url ");
    expect(valueKinds("read src/app.ts and a.json")).toBe("read  file  and  file ");
    expect(valueKinds("mail bob@example.org")).toBe("mail  email ");
    expect(valueKinds("run document.title")).toBe("run document.title");
  });
});

describe("SYNONYMS", () => {
  it("maps a word to the others of its group, abbreviations to their words", () => {
    expect(SYNONYMS.get("folder")).toEqual(["directory", "dir"]);
    expect(SYNONYMS.get("pr")).toEqual(["pull", "request"]);
  });
});

describe("summarize", () => {
  it("keeps the first line's first sentence", () => {
    expect(summarize("Search issues. Uses the API.\nMore.")).toBe("Search issues.");
    expect(summarize("Notion | Retrieve a block\nError Responses")).toBe("Notion | Retrieve a block");
    expect(summarize("Filters, e.g. by label. Then more.")).toBe("Filters, e.g. by label.");
    expect(summarize(undefined)).toBe("");
  });

  it("skips headings and list markers to the first line that says something", () => {
    expect(summarize("\n  🎯 Purpose\n    1. Retrieves a list of objects. Then more.")).toBe(
      "Retrieves a list of objects.",
    );
    expect(summarize("Usage:\n- Lists things")).toBe("Lists things");
  });

  it("cuts a long sentence at a word boundary with an ellipsis", () => {
    const summary = summarize(`${"word ".repeat(60)}end.`);
    expect(summary.length).toBeLessThanOrEqual(120);
    expect(summary).toMatch(/word…$/);
  });
});

describe("ToolIndex", () => {
  it("finds a tool by the words of its name", () => {
    const index = new ToolIndex([...github, ...fs]);
    expect(names(index.search("search issues"))[0]).toBe("github__search_issues");
    expect(names(index.search("read text file"))[0]).toBe("fs__readTextFile");
  });

  it("returns the name, server, first sentence of the description and a score", () => {
    const [hit] = new ToolIndex(github).search("issues", { limit: 1 });
    expect(hit).toEqual({
      name: "github__search_issues",
      server: "github",
      description: "Search for issues and pull requests across GitHub repositories.",
      score: expect.any(Number),
    });
    expect(hit!.score).toBeGreaterThan(0);
  });

  it("matches stems, prefixes, typos and synonyms", () => {
    const index = new ToolIndex([...github, ...fs]);
    expect(names(index.search("listings"))[0]).toBe("fs__list_directory");
    expect(names(index.search("direct"))[0]).toBe("fs__list_directory");
    expect(names(index.search("pull requst"))[0]).toBe("github__create_pull_request");
    expect(names(index.search("open a PR"))[0]).toBe("github__create_pull_request");
    expect(names(index.search("show a folder"))[0]).toBe("fs__list_directory");
  });

  it("prefers the tools of a server the request names", () => {
    const index = new ToolIndex([
      { name: "fs__move_file", server: "filesystem", originalName: "move_file", description: "Move a file" },
      {
        name: "fs__move_dir",
        server: "filesystem",
        originalName: "move_dir",
        description: "Move a directory",
      },
      { name: "p__hover", server: "puppeteer", originalName: "hover", description: "Hover an element" },
      { name: "m__find", server: "mongodb", originalName: "find", description: "Run a query" },
      { name: "f__find_files", server: "files", originalName: "find_files", description: "Find files" },
    ]);
    // "move" matches the filesystem tools' names; naming puppeteer lifts its tool above them.
    const hits = names(index.search("move the mouse onto the menu with puppeteer"));
    expect(hits.indexOf("p__hover")).toBeLessThan(hits.indexOf("fs__move_dir"));
    expect(names(index.search("find in mongo"))[0]).toBe("m__find");
  });

  it("searches the kind of a value rather than its pieces", () => {
    const index = new ToolIndex([
      { name: "web__navigate", description: "Navigate to a URL" },
      { name: "news__com_feed", description: "Com news feed" },
    ]);
    expect(names(index.search("go to https://news.example.com"))).toEqual(["web__navigate"]);
  });

  it("expands no synonym when given an empty table", () => {
    const index = new ToolIndex([...github, ...fs], { synonyms: new Map() });
    expect(index.search("folder")).toEqual([]);
  });

  it("searches titles and parameter descriptions", () => {
    const index = new ToolIndex([...github, ...fs]);
    expect(names(index.search("absolute"))).toEqual(["fs__list_directory"]);
    expect(names(index.search("head base"))).toEqual(["github__create_pull_request"]);
  });

  it("ranks the tool's name above a word that only its description has", () => {
    const index = new ToolIndex([
      { name: "a__notes", description: "Keeps a list of things" },
      { name: "b__list_things", description: "Shows things" },
    ]);
    expect(names(index.search("list"))).toEqual(["b__list_things", "a__notes"]);
  });

  it("returns at most `limit` hits, and at least one", () => {
    const index = new ToolIndex([...github, ...fs]);
    expect(index.search("file directory repositories", { limit: 2 })).toHaveLength(2);
    expect(index.search("file directory repositories", { limit: 0 })).toHaveLength(1);
    expect(index.search("file directory repositories")).toHaveLength(4);
  });

  it("keeps to one server when asked", () => {
    const index = new ToolIndex([...github, ...fs]);
    expect(index.search("file repository").map((hit) => hit.server)).toContain("fs");
    const hits = index.search("file repository", { server: "github" });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((hit) => hit.server === "github")).toBe(true);
  });

  it("leaves out the names a filter refuses", () => {
    const index = new ToolIndex([...github, ...fs]);
    const hits = index.search("search issues pull request", {
      filter: (name) => name !== "github__search_issues",
    });
    expect(names(hits)).toEqual(["github__create_pull_request"]);
  });

  it("browses in indexing order when the query has no searchable word", () => {
    const index = new ToolIndex([...github, ...fs]);
    expect(names(index.search("", { limit: 3 }))).toEqual([
      "github__search_issues",
      "github__create_pull_request",
      "fs__readTextFile",
    ]);
    expect(names(index.search("  the ", { server: "fs" }))).toEqual([
      "fs__readTextFile",
      "fs__list_directory",
    ]);
    expect(index.search("").every((hit) => hit.score === 0)).toBe(true);
  });

  it("refuses a query that is not text and a limit that is not a number, saying what to pass", () => {
    const index = new ToolIndex(github);
    expect(() => index.search(42 as unknown as string)).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", hint: expect.stringMatching(/words/) }),
    );
    expect(() => index.search("issues", { limit: Number.NaN })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", message: expect.stringMatching(/limit/) }),
    );
  });

  it("finds nothing for words no tool has", () => {
    expect(new ToolIndex([...github, ...fs]).search("zebra")).toEqual([]);
  });

  it("replaces one server's tools on update, leaving the others", () => {
    const index = new ToolIndex([...github, ...fs]);
    index.update("fs", [{ name: "fs__move_file", description: "Move or rename a file" }]);
    expect(index.size).toBe(3);
    expect(index.search("read text")).toEqual([]);
    expect(names(index.search("rename"))).toEqual(["fs__move_file"]);
    expect(index.search("rename")[0]!.server).toBe("fs");
    expect(names(index.search("issues"))[0]).toBe("github__search_issues");
  });

  it("keeps a server's place in browsing order when its tools are replaced", () => {
    const index = new ToolIndex([...github, ...fs]);
    index.update("github", [github[1]!]);
    expect(names(index.search(""))).toEqual([
      "github__create_pull_request",
      "fs__readTextFile",
      "fs__list_directory",
    ]);
  });

  it("drops a server's tools on remove", () => {
    const index = new ToolIndex([...github, ...fs]);
    expect(index.remove("github")).toBe(true);
    expect(index.remove("github")).toBe(false);
    expect(index.size).toBe(2);
    expect(index.search("issues pull request")).toEqual([]);
    expect(index.search("").map((hit) => hit.server)).toEqual(["fs", "fs"]);
  });

  it("moves a name to the server that indexed it last", () => {
    const index = new ToolIndex(github);
    index.update("other", [{ name: "github__search_issues", description: "Look for tickets" }]);
    expect(index.size).toBe(2);
    expect(index.search("tickets")).toMatchObject([{ name: "github__search_issues", server: "other" }]);
    index.remove("github");
    expect(names(index.search("tickets"))).toEqual(["github__search_issues"]);
  });

  it("indexes tools without a server under the empty server", () => {
    const index = new ToolIndex([
      { name: "everything__get-sum", description: "Returns the sum of two numbers" },
    ]);
    expect(index.search("sum numbers")).toMatchObject([{ name: "everything__get-sum", server: "" }]);
  });

  it("tolerates schemas without properties and tools without descriptions", () => {
    const index = new ToolIndex([
      { name: "x__ping", inputSchema: { type: "object" } },
      { name: "x__odd", inputSchema: { properties: { items: { type: "array", items: "nonsense" } } } },
    ]);
    expect(index.search("ping")).toMatchObject([{ name: "x__ping", description: "" }]);
    expect(names(index.search("items"))).toEqual(["x__odd"]);
  });
});

describe("ToolIndex over real servers' tools", () => {
  // 372 tools of 26 servers recorded by scripts/record-tool-catalog.mjs, and requests in a
  // user's words labelled with the tool that fulfils each (bench/tool-search-bench.ts prints more).
  const catalog = recordedCatalog();
  const requests = labelledRequests();

  it("every labelled tool is in the recorded catalog", () => {
    const known = new Set(catalog.tools().map((tool) => tool.name));
    const labelled = requests.flatMap((r) => [r.tool, ...(r.alsoAccept ?? [])]);
    expect(labelled.filter((name) => !known.has(name))).toEqual([]);
    expect(new Set(requests.map((r) => r.tool.split("__")[0])).size).toBe(catalog.servers().length);
  });

  // Measured 0.865 when written (bench/tool-search-bench.ts); below 0.85 something got worse.
  it("has a tool that fulfils the request in its first five hits for at least 85% of requests", () => {
    const { recall: r } = recall(new ToolIndex(catalog.tools()), requests, [5]);
    expect(r.get(5)).toBeGreaterThanOrEqual(0.85);
  });
});
