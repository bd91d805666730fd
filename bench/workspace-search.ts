/**
 * Workspace search benchmark: mcplex `search_files` through the real stdio server against
 * `grep -r` and against `@modelcontextprotocol/server-filesystem`'s `search_files`, on one
 * generated tree of 20,000 files / ~200 MB (bench/workspace-tree.ts), in one run. Prints the
 * median wall time of several runs, peak RSS, and the ratios; absolute numbers on shared
 * machines are noise. The tree is made once under the temp dir and reused; `--clean` deletes it.
 *
 *   npm run build && npx tsx bench/workspace-search.ts [--reps N] [--clean]
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { median } from "./interleaved.js";
import { defaultTreeDir, ensureTree, NEEDLE, removeTree } from "./workspace-tree.js";

const argReps = process.argv.indexOf("--reps");
const REPS = argReps === -1 ? 5 : Number(process.argv[argReps + 1]);
const STDIO_MAIN = new URL("../dist/workspace/stdio-main.js", import.meta.url).pathname;
const FILESYSTEM_MAIN = new URL(
  "../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
  import.meta.url,
).pathname;
const REGEX = "zqxNeedle_[0-9]{4}";
const GLOB = "**/*.md";

if (process.argv.includes("--clean")) {
  removeTree();
  console.log(`removed ${defaultTreeDir()}`);
  process.exit(0);
}
if (!existsSync(STDIO_MAIN)) throw new Error(`${STDIO_MAIN} is missing: run npm run build first`);

const tree = ensureTree(defaultTreeDir(), (line) => console.log(line));
const ROOT = tree.root;

interface Run {
  ms: number;
  /** Peak RSS in MiB, when known. */
  peakMiB?: number;
  /** Result lines (grep, find) or matches/files (servers). */
  count: number;
}

// ---- External commands: wall time from here, peak RSS from GNU time (or /proc sampling) ----

const HAVE_TIME = spawnSync("/usr/bin/time", ["-v", "true"], { stdio: "ignore" }).status === 0;

/**
 * Run `argv` with output piped to us and counted in lines. Piped, not sent to /dev/null: GNU
 * grep notices /dev/null and stops at the first match. Under `/usr/bin/time -v` the peak RSS
 * is exact; without it /proc/<pid>/status is sampled, which can miss a short peak.
 */
function runCommand(argv: string[]): Promise<Run> {
  const full = HAVE_TIME ? ["/usr/bin/time", "-v", ...argv] : argv;
  return new Promise((resolve, reject) => {
    const t = performance.now();
    // C locale: bytes, no UTF-8 validation, as our literal search compares bytes.
    const child = spawn(full[0]!, full.slice(1), {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LC_ALL: "C" },
    });
    let lines = 0;
    let stderr = "";
    let sampled = 0;
    const sampler = HAVE_TIME ? undefined : setInterval(() => (sampled = Math.max(sampled, hwm(child))), 2);
    child.stdout.on("data", (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    });
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - t;
      clearInterval(sampler);
      // grep: 1 = no match, which is an answer; 2 = trouble.
      if (code !== 0 && code !== 1) return reject(new Error(`${argv.join(" ")} exited ${code}: ${stderr}`));
      const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1];
      const peakMiB = kb !== undefined ? Number(kb) / 1024 : sampled > 0 ? sampled : undefined;
      resolve({ ms, count: lines, ...(peakMiB !== undefined && { peakMiB }) });
    });
  });
}

/** VmHWM (peak RSS) of a live process in MiB, 0 if unknown. */
function hwm(child: ChildProcess): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
    return kb === undefined ? 0 : Number(kb) / 1024;
  } catch {
    return 0;
  }
}

// ---- MCP servers: a raw newline-JSON client, timed from request to response ----

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, unknown>;
}

interface Server {
  name: string;
  child: ChildProcess;
  call(args: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

async function startServer(name: string, args: string[]): Promise<Server> {
  // `node <script>` so the pid we read VmHWM from is the server itself, not a shim.
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"] });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let buffer = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    let start = 0;
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n", start)) {
      const m = JSON.parse(buffer.slice(start, nl)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
      };
      start = nl + 1;
      if (m.id === undefined) continue;
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) p?.reject(new Error(`${name}: ${m.error.message}`));
      else p?.resolve(m.result);
    }
    buffer = buffer.slice(start);
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  void exited.then(() => {
    for (const p of pending.values()) p.reject(new Error(`${name} exited`));
  });
  let id = 0;
  const request = (method: string, params: unknown) =>
    new Promise((resolve, reject) => {
      const n = ++id;
      pending.set(n, { resolve, reject });
      child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: n, method, params })}\n`);
    });
  await request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "workspace-search-bench", version: "1" },
  });
  child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  return {
    name,
    child,
    call: async (args) => {
      const result = (await request("tools/call", { name: "search_files", arguments: args })) as ToolResult;
      if (result.isError) throw new Error(`${name}: ${result.content[0]?.text}`);
      return result;
    },
    close: async () => {
      // In stages: end of input, then SIGTERM, then SIGKILL; timers unref'd.
      child.stdin!.end();
      const term = setTimeout(() => child.kill("SIGTERM"), 2000).unref();
      const kill = setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      await exited;
      clearTimeout(term);
      clearTimeout(kill);
    },
  };
}

/** A case: what to run once per repetition, and how many results that is. */
interface Case {
  label: string;
  run(): Promise<Run>;
  /** Peak RSS when the runner cannot report it per run (servers: VmHWM after all runs). */
  peak?: () => number;
  /** Peak RSS right after start, before any search. */
  baseline?: number;
}

function commandCase(label: string, argv: string[]): Case {
  return { label, run: () => runCommand(argv) };
}

async function serverCase(
  label: string,
  args: string[],
  toolArgs: Record<string, unknown>,
  count: (r: ToolResult) => number,
  servers: Server[],
): Promise<Case> {
  const server = await startServer(label, args);
  servers.push(server);
  const baseline = hwm(server.child);
  return {
    label,
    baseline,
    peak: () => hwm(server.child),
    run: async () => {
      const t = performance.now();
      const result = await server.call(toolArgs);
      return { ms: performance.now() - t, count: count(result) };
    },
  };
}

// What grep needs to mean what our search means by default: -I skips binaries (GNU grep calls
// a file binary for a NUL byte in its first buffer, in the C locale, as `looksBinary` does);
// --exclude-dir / --exclude drop what the root .gitignore lists (`node_modules/`, `build/`,
// `*.log`; the tree has no nested .gitignore, so these flags are exact); -n reports line
// numbers and every matching line, as we do. `grep -rIl` would stop at a file's first match,
// which is less work than our tool does, so it is not the analogue. Plain `grep -rn` (binaries
// and ignored paths scanned too) is printed for reference.
const excludes = [
  ...tree.ignoredDirs.map((d) => `--exclude-dir=${d}`),
  ...tree.ignoredGlobs.map((g) => `--exclude=${g}`),
];
const servers: Server[] = [];
const mcplexArgs = [STDIO_MAIN, "--root", ROOT];
// The server caps maxBytes at its 256 MiB limit, above the tree's size; `truncated` is checked below.
const unlimited = { maxResults: 10_000, maxBytes: 2 ** 31 };
const matchesOf = (r: ToolResult) => (r.structuredContent!.matches as unknown[]).length;
const filesOf = (r: ToolResult) => (r.structuredContent!.files as unknown[]).length;
const linesOf = (r: ToolResult) => {
  const text = r.content[0]?.text ?? "";
  return text === "No matches found" ? 0 : text.split("\n").length;
};

const literal = [
  commandCase("grep -rn (everything)", ["grep", "-rn", "-F", NEEDLE, ROOT]),
  commandCase("grep -rnI + excludes", ["grep", "-rnI", ...excludes, "-F", NEEDLE, ROOT]),
  await serverCase("mcplex search_files", mcplexArgs, { query: NEEDLE, ...unlimited }, matchesOf, servers),
];
const regex = [
  commandCase("grep -rnIE + excludes", ["grep", "-rnIE", ...excludes, REGEX, ROOT]),
  await serverCase(
    "mcplex search_files",
    mcplexArgs,
    { query: REGEX, regex: true, ...unlimited },
    matchesOf,
    servers,
  ),
];
// server-filesystem's search_files matches globs on paths only (no content search, no
// .gitignore; it lists directories too): compared on a glob with its excludePatterns set to
// what our .gitignore skips, so both return the same files. `find` is the floor.
const names = [
  commandCase("find -name (pruned)", [
    "find",
    ROOT,
    "(",
    ...tree.ignoredDirs.flatMap((d, i) => [...(i > 0 ? ["-o"] : []), "-name", d]),
    ")",
    "-prune",
    "-o",
    "-type",
    "f",
    "-name",
    "*.md",
    "-print",
  ]),
  await serverCase("mcplex search_files", mcplexArgs, { pattern: GLOB, ...unlimited }, filesOf, servers),
  await serverCase(
    "server-filesystem",
    [FILESYSTEM_MAIN, ROOT],
    {
      path: ROOT,
      pattern: GLOB,
      excludePatterns: [
        ...tree.ignoredDirs.map((d) => `**/${d}`),
        ...tree.ignoredGlobs.map((g) => `**/${g}`),
      ],
    },
    linesOf,
    servers,
  ),
];
const groups = [
  { title: `content, literal "${NEEDLE}"`, cases: literal },
  { title: `content, regex /${REGEX}/`, cases: regex },
  { title: `names, glob "${GLOB}"`, cases: names },
];

// One warm-up (page cache, JIT) then REPS rounds, cases interleaved so drift hits all alike.
const runs = new Map<Case, Run[]>();
for (let rep = -1; rep < REPS; rep++) {
  for (const { cases } of groups) {
    for (const c of cases) {
      const r = await c.run();
      if (rep >= 0) runs.set(c, [...(runs.get(c) ?? []), r]);
    }
  }
}

const summary = new Map<Case, { ms: number; peak?: number; count: number }>();
for (const [c, rs] of runs) {
  const peaks = rs.flatMap((r) => (r.peakMiB === undefined ? [] : [r.peakMiB]));
  const peak = c.peak?.() ?? (peaks.length > 0 ? Math.max(...peaks) : undefined);
  summary.set(c, { ms: median(rs.map((r) => r.ms)), count: rs[0]!.count, ...(peak && { peak }) });
}

console.log(
  `\n${tree.files} files, ${(tree.bytes / 1e6).toFixed(0)} MB (${tree.binaryFiles} binary, ${tree.ignoredFiles} gitignored) in ${ROOT}`,
);
console.log(
  `median of ${REPS} runs after one warm-up; peak RSS: ${HAVE_TIME ? "GNU time" : "sampled"} for commands, VmHWM for servers\n`,
);
console.log(
  `${"".padEnd(28)} ${"ms".padStart(8)} ${"peak MiB".padStart(9)} ${"(idle)".padStart(7)} ${"results".padStart(8)}`,
);
for (const { title, cases } of groups) {
  console.log(title);
  for (const c of cases) {
    const s = summary.get(c)!;
    const idle = c.baseline === undefined ? "" : c.baseline.toFixed(0);
    console.log(
      `  ${c.label.padEnd(26)} ${s.ms.toFixed(0).padStart(8)} ${(s.peak?.toFixed(0) ?? "?").padStart(9)} ${idle.padStart(7)} ${String(s.count).padStart(8)}`,
    );
  }
}

console.log("");
const row = (label: string, value: number, target: string) =>
  console.log(`${label.padEnd(52)} ${value.toFixed(2).padStart(6)}   (target ${target})`);
const ms = (c: Case) => summary.get(c)!.ms;
row("mcplex / grep -rnI time, literal", ms(literal[2]!) / ms(literal[1]!), "<= 2");
row("mcplex / grep -rn (everything) time, literal", ms(literal[2]!) / ms(literal[0]!), "info");
row("mcplex / grep -rnIE time, regex", ms(regex[1]!) / ms(regex[0]!), "info");
row("mcplex / server-filesystem time, glob", ms(names[1]!) / ms(names[2]!), "< 1");
row("mcplex / find time, glob", ms(names[1]!) / ms(names[0]!), "info");

// Correctness: the needles where the tree put them, and every side agreeing on counts.
const mcplex = servers[0]!;
const found = await mcplex.call({ query: NEEDLE, ...unlimited });
const sc = found.structuredContent as {
  matches: Array<{ path: string; line: number; column: number }>;
  filesScanned: number;
  bytesScanned: number;
  binarySkipped: number;
  truncated: boolean;
};
console.log(
  `\nneedles (mcplex scanned ${sc.filesScanned} files, ${(sc.bytesScanned / 1e6).toFixed(0)} MB, skipped ${sc.binarySkipped} binary, truncated: ${sc.truncated}):`,
);
const problems: string[] = [];
for (const n of tree.needles) {
  const hit = sc.matches.find((m) => m.path === n.path && (n.line === 0 || m.line === n.line));
  const ok = (hit !== undefined) === n.expected;
  if (!ok) problems.push(`${n.why}: ${n.path}:${n.line}`);
  const where = hit ? `${hit.path}:${hit.line}:${hit.column}` : `${n.path}${n.line ? `:${n.line}` : ""}`;
  console.log(
    `  ${ok ? "ok  " : "FAIL"} ${n.why.padEnd(22)} ${n.expected ? "found   " : "skipped "} ${hit ? "found" : "not found"}  ${where}`,
  );
}
const expected = tree.needles.filter((n) => n.expected).length;
if (sc.matches.length !== expected) problems.push(`${sc.matches.length} matches, ${expected} expected`);
if (sc.truncated) problems.push("the search was truncated");
const grepCount = summary.get(literal[1]!)!.count;
if (grepCount !== sc.matches.length)
  problems.push(`grep -rnI found ${grepCount}, mcplex ${sc.matches.length}`);
if (summary.get(regex[1]!)!.count !== expected) problems.push("the regex search disagrees");
if (summary.get(names[1]!)!.count !== summary.get(names[2]!)!.count)
  problems.push("mcplex and server-filesystem list different files for the glob");
if (summary.get(names[1]!)!.count !== summary.get(names[0]!)!.count)
  problems.push("mcplex and find list different files for the glob");
console.log(
  problems.length === 0
    ? `all ${expected} expected needles found, none of the others; counts agree`
    : `PROBLEMS:\n  ${problems.join("\n  ")}`,
);

await Promise.all(servers.map((s) => s.close()));
process.exitCode = problems.length === 0 ? 0 : 1;
