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
import { CatalogView } from "../src/catalog-modes/catalog-view.js";
import { indexedSearch, viewEngines } from "../src/catalog-modes/view-engines.js";
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

const { recall: r, misses } = recall(index, requests, [1, 5, 10]);
// The same index without the synonym table: what the table adds.
const { recall: plain } = recall(new ToolIndex(tools, { synonyms: new Map() }), requests, [1, 5]);

// One server's list_changed: re-index only its tools.
const biggest = servers.reduce((a, b) => (b.tools.length > a.tools.length ? b : a));
const biggestTools = tools.filter((t) => t.server === biggest.server);
const updates: number[] = [];
for (let i = 0; i < BUILDS; i++) {
  const start = performance.now();
  index.update(biggest.server, biggestTools);
  updates.push(performance.now() - start);
}

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
const tokens = (value: unknown) =>
  encoding.encode(typeof value === "string" ? value : JSON.stringify(value)).length;

/** A tool as tools/list sends it. */
const listed = (t: CatalogTool) => ({
  name: t.name,
  ...(t.title === undefined ? {} : { title: t.title }),
  ...(t.description === undefined ? {} : { description: t.description }),
  inputSchema: t.inputSchema,
  ...(t.outputSchema === undefined ? {} : { outputSchema: t.outputSchema }),
  ...(t.annotations === undefined ? {} : { annotations: t.annotations }),
});
const fullList = tokens({ tools: tools.map(listed) });

// What the gateway's views really send: their tools/list, and their meta-tools' answers.
const searchView = new CatalogView({ mode: "search" }, { search: indexedSearch() });
const codeView = new CatalogView({ mode: "code" }, viewEngines());
const noCall = () => Promise.reject(new Error("the bench calls no tool"));
const viewCall = { tools, callTool: noCall, signal: new AbortController().signal };
// The text the model reads of an answer (not its JSON-escaped form on the wire).
const textOf = (result: { content: unknown[] }) =>
  result.content.map((c) => (c as { text?: string }).text ?? "").join("\n");
const searchResults: number[] = [];
const describeResults: number[] = [];
const declareResults: number[] = [];
for (const [i, q] of requests.entries()) {
  searchResults.push(
    tokens(textOf(await searchView.call("search_tools", { query: q.request, limit: SEARCH_HITS }, viewCall))),
  );
  const second = index.search(q.request, { limit: 2 }).find((hit) => hit.name !== q.tool);
  const names = i % 2 === 0 || second === undefined ? [q.tool] : [q.tool, second.name];
  describeResults.push(tokens(textOf(await searchView.call("describe_tools", { names }, viewCall))));
  declareResults.push(tokens(textOf(await codeView.call("describe_tools", { names }, viewCall))));
}
const searchList = tokens({ tools: searchView.listTools(tools) });
const codeList = tokens({ tools: codeView.listTools(tools) });
const searchMode = searchList + median(searchResults) + median(describeResults);
const codeMode = codeList + median(searchResults) + median(declareResults);

const ms = (x: number) => `${x.toFixed(3)} ms`;
console.log(
  `\nTool search over ${tools.length} tools of ${servers.length} real servers, ${requests.length} labelled requests\n`,
);
console.table({
  "recall@1": { value: r.get(1)!.toFixed(3) },
  "recall@5": { value: r.get(5)!.toFixed(3) },
  "recall@10": { value: r.get(10)!.toFixed(3) },
  "recall@1 / @5 without synonyms": { value: `${plain.get(1)!.toFixed(3)} / ${plain.get(5)!.toFixed(3)}` },
  "search p50": { value: ms(percentile(latencies, 0.5)) },
  "search p95": { value: ms(percentile(latencies, 0.95)) },
  "index build (median)": { value: ms(median(builds)) },
  [`update one server (${biggest.server}, ${biggestTools.length} tools)`]: { value: ms(median(updates)) },
});
console.log("\nTokens a client reads (o200k_base)\n");
const share = (x: number) => `${((100 * x) / fullList).toFixed(1)} % of all`;
console.table({
  "all: tools/list": { tokens: fullList, share: share(fullList) },
  "search: tools/list (3 meta-tools)": { tokens: searchList, share: "" },
  [`  + search_tools answer (${SEARCH_HITS} hits, median)`]: { tokens: median(searchResults), share: "" },
  "  + describe_tools of 1-2 tools (median)": { tokens: median(describeResults), share: "" },
  "search: total": { tokens: searchMode, share: share(searchMode) },
  "code: tools/list (3 meta-tools)": { tokens: codeList, share: "" },
  "  + search_tools, describe_tools as declarations": {
    tokens: median(searchResults) + median(declareResults),
    share: "",
  },
  "code: total": { tokens: codeMode, share: share(codeMode) },
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
