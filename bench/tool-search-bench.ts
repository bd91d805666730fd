/**
 * Tool search over a real catalog: how often the right tool comes first or in the first five
 * for a request in a user's words, how long a search and an index build take, and how many
 * tokens a client receives in search mode against the full tools/list.
 *
 * The catalog is test/fixtures/catalog/tools.json (real servers' tools/list, recorded by
 * scripts/record-tool-catalog.mjs); the requests are test/fixtures/catalog/requests.json.
 *
 *   npx tsx bench/tool-search-bench.ts [--misses]
 */
import { performance } from "node:perf_hooks";
import { getEncoding } from "js-tiktoken";
import type { CatalogTool } from "../src/catalog/index.js";
import { ToolIndex } from "../src/catalog/tool-index.js";
import {
  labelledRequests,
  recall,
  recordedCatalog,
  recordedServers,
} from "../test/fixtures/catalog/tool-catalog.js";

const BUILDS = 50;
const ROUNDS = 20;
const SEARCH_HITS = 8;

const servers = recordedServers();
const catalog = recordedCatalog();
const tools = catalog.tools();
const requests = labelledRequests();
const known = new Set(tools.map((t) => t.name));
for (const r of requests) {
  for (const name of [r.tool, ...(r.alsoAccept ?? [])]) {
    if (!known.has(name)) throw new Error(`requests.json names ${name}, which the catalog does not hold`);
  }
}

// Index build: the median of many builds (the first ones run in V8's lower tiers).
const builds: number[] = [];
let index = new ToolIndex(tools);
for (let i = 0; i < BUILDS; i++) {
  const start = performance.now();
  index = new ToolIndex(tools);
  builds.push(performance.now() - start);
}

// One server's list_changed: re-index only its tools.
const biggest = servers.reduce((a, b) => (b.tools.length > a.tools.length ? b : a));
const biggestTools = tools.filter((t) => t.server === biggest.server);
const updates: number[] = [];
for (let i = 0; i < BUILDS; i++) {
  const start = performance.now();
  index.update(biggest.server, biggestTools);
  updates.push(performance.now() - start);
}

const { recall: r, misses } = recall(index, requests, [1, 5, 10]);

// Search latency: every request, ROUNDS times, after one warm-up round.
for (const q of requests) index.search(q.request, { limit: SEARCH_HITS });
const latencies: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const q of requests) {
    const start = performance.now();
    index.search(q.request, { limit: SEARCH_HITS });
    latencies.push(performance.now() - start);
  }
}

// Tokens, as the model would read them.
const encoding = getEncoding("o200k_base");
const tokens = (value: unknown) => encoding.encode(JSON.stringify(value)).length;

/** A tool as tools/list sends it. */
const listed = (t: CatalogTool) => ({
  name: t.name,
  ...(t.title === undefined ? {} : { title: t.title }),
  ...(t.description === undefined ? {} : { description: t.description }),
  inputSchema: t.inputSchema,
  ...(t.outputSchema === undefined ? {} : { outputSchema: t.outputSchema }),
  ...(t.annotations === undefined ? {} : { annotations: t.annotations }),
});
const byName = new Map(tools.map((t) => [t.name, t]));
const fullList = tokens({ tools: tools.map(listed) });

// The three meta-tools of search mode as a client would list them (the gateway's definitions
// may word them differently; their size is what counts here).
const metaTools = [
  {
    name: "search_tools",
    description:
      "Search the tools of all connected servers by what you want to do. Returns the best matches " +
      "with a one-line description; call describe_tools for their input schemas, then call_tool.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "What you want to do, in a few words" },
        server: { type: "string", description: "Only tools of this server" },
        limit: { type: "integer", minimum: 1, maximum: 50, description: "Most results (default 10)" },
      },
      required: ["query"],
    },
  },
  {
    name: "describe_tools",
    description: "The full definitions (description, input schema) of tools found with search_tools.",
    inputSchema: {
      type: "object",
      properties: { names: { type: "array", items: { type: "string" }, description: "Exposed tool names" } },
      required: ["names"],
    },
  },
  {
    name: "call_tool",
    description: "Call a tool by its exposed name with arguments matching its input schema.",
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", description: "Exposed tool name" },
        arguments: { type: "object", description: "The tool's arguments" },
      },
      required: ["name"],
    },
  },
];
const metaList = tokens({ tools: metaTools });
const searchResults = requests.map((q) =>
  tokens({
    tools: index
      .search(q.request, { limit: SEARCH_HITS })
      .map((hit) => ({ name: hit.name, server: hit.server, description: hit.description })),
  }),
);
const describeResults = requests.map((q, i) => {
  const second = index.search(q.request, { limit: 2 }).find((hit) => hit.name !== q.tool);
  const described = i % 2 === 0 || second === undefined ? [q.tool] : [q.tool, second.name];
  return tokens({ tools: described.map((name) => listed(byName.get(name)!)) });
});
const searchMode = metaList + median(searchResults) + median(describeResults);

const ms = (x: number) => `${x.toFixed(3)} ms`;
console.log(
  `\nTool search over ${tools.length} tools of ${servers.length} real servers, ${requests.length} labelled requests\n`,
);
console.table({
  "recall@1": { value: r.get(1)!.toFixed(3) },
  "recall@5": { value: r.get(5)!.toFixed(3) },
  "recall@10": { value: r.get(10)!.toFixed(3) },
  "search p50": { value: ms(percentile(latencies, 0.5)) },
  "search p95": { value: ms(percentile(latencies, 0.95)) },
  "index build (median)": { value: ms(median(builds)) },
  [`update one server (${biggest.server}, ${biggestTools.length} tools)`]: { value: ms(median(updates)) },
});
console.log("\nTokens a client reads (o200k_base)\n");
console.table({
  "full tools/list": { tokens: fullList },
  "search mode: 3 meta-tools listed": { tokens: metaList },
  [`  + search_tools result (${SEARCH_HITS} hits, median)`]: { tokens: median(searchResults) },
  "  + describe_tools of 1-2 tools (median)": { tokens: median(describeResults) },
  "search mode total": { tokens: searchMode },
  saved: { tokens: `${(100 * (1 - searchMode / fullList)).toFixed(1)} %` },
});
if (process.argv.includes("--misses")) {
  console.log(`\nNot in the first 10 (${misses.length}):`);
  for (const miss of misses)
    console.log(
      `  ${miss.request.request}\n    want ${miss.request.tool}\n    got  ${miss.got.slice(0, 5).join(", ")}`,
    );
}

function median(values: number[]): number {
  return percentile(values, 0.5);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}
