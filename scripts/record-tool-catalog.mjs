#!/usr/bin/env node
// Records the tools/list of real MCP servers from npm into test/fixtures/catalog/tools.json, the
// catalog that the tool-search index is measured on (bench/tool-search-bench.ts) and tested
// against (test/catalog/tool-index.test.ts).
//
// Each server is installed into its own prefix under a temp dir (`npm install --prefix`), so
// nothing reaches our package.json, with install scripts off and browser downloads skipped.
// It is started over stdio with dummy credentials where it wants some (no call is ever made, only
// tools/list) and listed with the official SDK client. Servers that fail to install, start or list
// are reported on stderr and left out of the fixture.
//
//   node scripts/record-tool-catalog.mjs [--out FILE] [--only name,name] [--node PATH]
//
// `--node` runs the servers with another Node binary (some want Node 22).
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { z } from "zod";

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const { values: flags } = parseArgs({
  options: {
    out: { type: "string", default: join(root, "test/fixtures/catalog/tools.json") },
    only: { type: "string" },
    node: { type: "string", default: process.execPath },
  },
});

/** A tools/list page as servers really send it: a name on every tool, the rest as it comes. */
const LENIENT_LIST = z.looseObject({
  tools: z.array(z.looseObject({ name: z.string() })),
  nextCursor: z.string().optional(),
});

const DUMMY = "dummy-token-for-listing-only";

/**
 * The servers to record. `args` and `env` are what each needs to start and list its tools
 * without a real account; `{dir}` in an argument is replaced by a scratch directory.
 * Tried and left out (2026-11): @supabase/mcp-server-supabase (fetches from supabase.com before
 * listing), @heroku/mcp-server (its release misses a dependency), @stripe/mcp (now a proxy to
 * mcp.stripe.com), @neondatabase/mcp-server-neon (its install fails here with a network error:
 * something it needs is not on the npm registry), @browserbasehq/mcp (no release
 * here; @browserbasehq/mcp-server-browserbase is recorded instead).
 */
const CANDIDATES = [
  { server: "everything", package: "@modelcontextprotocol/server-everything", args: ["stdio"] },
  { server: "filesystem", package: "@modelcontextprotocol/server-filesystem", args: ["{dir}"] },
  { server: "memory", package: "@modelcontextprotocol/server-memory", env: { MEMORY_FILE_PATH: "{dir}/memory.jsonl" } },
  { server: "sequential_thinking", package: "@modelcontextprotocol/server-sequential-thinking" },
  { server: "github", package: "@modelcontextprotocol/server-github", env: { GITHUB_PERSONAL_ACCESS_TOKEN: DUMMY } },
  { server: "gitlab", package: "@modelcontextprotocol/server-gitlab", env: { GITLAB_PERSONAL_ACCESS_TOKEN: DUMMY } },
  {
    server: "slack",
    package: "@modelcontextprotocol/server-slack",
    env: { SLACK_BOT_TOKEN: `xoxb-${DUMMY}`, SLACK_TEAM_ID: "T00000000" },
  },
  { server: "google_maps", package: "@modelcontextprotocol/server-google-maps", env: { GOOGLE_MAPS_API_KEY: DUMMY } },
  { server: "brave_search", package: "@modelcontextprotocol/server-brave-search", env: { BRAVE_API_KEY: DUMMY } },
  { server: "puppeteer", package: "@modelcontextprotocol/server-puppeteer" },
  { server: "playwright", package: "@playwright/mcp", args: ["--headless"] },
  { server: "chrome_devtools", package: "chrome-devtools-mcp", args: ["--headless", "--isolated"] },
  { server: "notion", package: "@notionhq/notion-mcp-server", env: { NOTION_TOKEN: DUMMY } },
  { server: "desktop_commander", package: "@wonderwhy-er/desktop-commander" },
  { server: "context7", package: "@upstash/context7-mcp" },
  { server: "kubernetes", package: "mcp-server-kubernetes" },
  { server: "sentry", package: "@sentry/mcp-server", args: ["--access-token", DUMMY] },
  { server: "hubspot", package: "@hubspot/mcp-server", env: { PRIVATE_APP_ACCESS_TOKEN: DUMMY } },
  { server: "firecrawl", package: "firecrawl-mcp", env: { FIRECRAWL_API_KEY: `fc-${DUMMY}` } },
  {
    server: "browserbase",
    package: "@browserbasehq/mcp-server-browserbase",
    env: { BROWSERBASE_API_KEY: DUMMY, BROWSERBASE_PROJECT_ID: DUMMY, GEMINI_API_KEY: DUMMY },
  },
  { server: "mongodb", package: "mongodb-mcp-server", env: { MDB_MCP_TELEMETRY: "disabled" } },
  { server: "git", package: "@cyanheads/git-mcp-server", env: { MCP_TRANSPORT_TYPE: "stdio", MCP_LOG_LEVEL: "error" } },
  { server: "tavily", package: "tavily-mcp", env: { TAVILY_API_KEY: `tvly-${DUMMY}` } },
  { server: "exa", package: "exa-mcp-server", env: { EXA_API_KEY: DUMMY } },
  { server: "circleci", package: "@circleci/mcp-server-circleci", env: { CIRCLECI_TOKEN: DUMMY } },
  { server: "postgres", package: "@modelcontextprotocol/server-postgres", args: ["postgresql://localhost:1/none"] },
];

/** Nothing may download a browser or phone home while we list. */
const QUIET_ENV = {
  PUPPETEER_SKIP_DOWNLOAD: "1",
  PUPPETEER_SKIP_CHROMIUM_DOWNLOAD: "1",
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1",
  DO_NOT_TRACK: "1",
  DISABLE_TELEMETRY: "1",
  NO_UPDATE_NOTIFIER: "1",
};

const wanted = flags.only ? new Set(flags.only.split(",")) : undefined;
const candidates = CANDIDATES.filter((c) => wanted === undefined || wanted.has(c.server));
const work = await mkdtemp(join(tmpdir(), "mcplex-tool-catalog-"));
const recorded = [];
const failed = [];

try {
  for (const candidate of candidates) {
    const prefix = join(work, candidate.server);
    const scratch = join(work, `${candidate.server}-scratch`);
    await mkdir(scratch, { recursive: true });
    try {
      const { version, bin } = await install(candidate.package, prefix);
      const fill = (value) => value.replaceAll("{dir}", scratch);
      const tools = await listTools({
        command: flags.node,
        args: [bin, ...(candidate.args ?? []).map(fill)],
        env: { ...baseEnv(), HOME: scratch, ...QUIET_ENV, ...mapValues(candidate.env ?? {}, fill) },
        cwd: scratch,
      });
      if (tools.length === 0) throw new Error("listed no tools");
      recorded.push({ server: candidate.server, package: candidate.package, version, tools });
      console.error(`ok      ${candidate.server} (${candidate.package}@${version}): ${tools.length} tools`);
    } catch (error) {
      failed.push(candidate.server);
      console.error(`failed  ${candidate.server} (${candidate.package}): ${oneLine(error)}`);
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

const total = recorded.reduce((n, s) => n + s.tools.length, 0);
await mkdir(dirname(flags.out), { recursive: true });
await writeFile(flags.out, `${JSON.stringify(recorded, null, 2)}\n`);
console.error(`\n${recorded.length} servers, ${total} tools -> ${flags.out}`);
if (failed.length > 0) console.error(`left out: ${failed.join(", ")}`);

/** Installs one package into its own prefix; its version and the path of its (first) bin. */
async function install(name, prefix) {
  await mkdir(prefix, { recursive: true });
  await run(
    "npm",
    ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", `${name}@latest`],
    { env: { ...process.env, ...QUIET_ENV }, timeout: 600_000, maxBuffer: 16 * 1024 * 1024 },
  );
  const dir = join(prefix, "node_modules", name);
  const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  const bins = typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {});
  if (bins.length === 0) throw new Error(`${name} has no bin`);
  return { version: manifest.version, bin: join(dir, bins[0]) };
}

/** Starts a server over stdio and pages through its tools/list; the tools as listed. */
async function listTools({ command, args, env, cwd }) {
  const transport = new StdioClientTransport({ command, args, env, cwd, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  const client = new Client({ name: "mcplex-record-tool-catalog", version: "1" });
  try {
    await client.connect(transport, { timeout: 60_000 });
    const tools = [];
    let cursor;
    do {
      // Not client.listTools(): its result check refuses a whole page for one tool whose schema
      // breaks the spec (server-gitlab's lack `type: "object"`), and a real catalog holds such tools.
      const page = await client.request(
        { method: "tools/list", params: cursor ? { cursor } : {} },
        LENIENT_LIST,
        { timeout: 60_000 },
      );
      tools.push(...page.tools.map(pickTool));
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } catch (error) {
    throw new Error(`${oneLine(error)}${stderr ? ` | stderr: ${stderr.trim().split("\n").slice(-3).join(" / ")}` : ""}`);
  } finally {
    await client.close().catch(() => {});
  }
}

/** The fields of a tool the fixture keeps, in a stable order. */
function pickTool(tool) {
  const kept = { name: tool.name };
  if (tool.title !== undefined) kept.title = tool.title;
  kept.description = tool.description ?? "";
  kept.inputSchema = tool.inputSchema;
  if (tool.outputSchema !== undefined) kept.outputSchema = tool.outputSchema;
  if (tool.annotations !== undefined) kept.annotations = tool.annotations;
  return kept;
}

/** PATH and a few basics only: a server must not see our environment's secrets (HOME is its scratch dir). */
function baseEnv() {
  const env = {};
  for (const key of ["PATH", "HOME", "TMPDIR", "LANG"]) if (process.env[key]) env[key] = process.env[key];
  return env;
}

function mapValues(object, fn) {
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, fn(v)]));
}

function oneLine(error) {
  return String(error instanceof Error ? error.message : error).replace(/\s+/g, " ").slice(0, 300);
}
