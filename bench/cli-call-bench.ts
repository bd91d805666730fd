/**
 * `mcplex call` bench: one call, as a user runs it (a fresh `node dist/bin/mcplex.js call`),
 * against a config with the tool's server alone and against one with nine more real stdio
 * servers (`@modelcontextprotocol/server-memory`, a Node process each, that take a visible
 * time to start). The targets take turns run by run, so that a slow moment of the shared
 * machine hits all alike, and the ratio of medians is printed. A third target, the ten
 * servers with the echo server unprefixed (so the name cannot tell the owner and every
 * server is started), is what every call cost before.
 *
 *   npm run build && npx tsx bench/cli-call-bench.ts [--runs N]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { median } from "./interleaved.js";

const CLI = resolve("dist/bin/mcplex.js");
const ECHO = resolve("bench/echo-server.mjs");
const MEMORY = resolve("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
const argRuns = process.argv.indexOf("--runs");
const RUNS = argRuns === -1 ? 15 : Number(process.argv[argRuns + 1]);
const OTHERS = 9;

const dir = mkdtempSync(join(tmpdir(), "mcplex-cli-call-bench-"));

function writeConfig(name: string, others: number, echoPrefix?: string): string {
  const lines = ["servers:", "  api:", `    command: ${process.execPath}`, `    args: [${ECHO}]`];
  if (echoPrefix !== undefined) lines.push(`    prefix: "${echoPrefix}"`);
  for (let i = 0; i < others; i++) {
    lines.push(
      `  memory${i}:`,
      `    command: ${process.execPath}`,
      `    args: [${MEMORY}]`,
      `    env: { MEMORY_FILE_PATH: ${join(dir, `memory${i}.jsonl`)} }`,
    );
  }
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

interface Target {
  label: string;
  args: string[];
  times: number[];
}

const targets: Target[] = [
  { label: "the server alone", args: ["api__echo", writeConfig("alone", 0)], times: [] },
  { label: `with ${OTHERS} more servers`, args: ["api__echo", writeConfig("ten", OTHERS)], times: [] },
  {
    label: `with ${OTHERS} more, owner unknown (starts all)`,
    args: ["echo", writeConfig("ten-unprefixed", OTHERS, "")],
    times: [],
  },
];

function runOnce(target: Target): number {
  const [tool, config] = target.args as [string, string];
  const start = performance.now();
  const run = spawnSync(process.execPath, [CLI, "call", tool, '{"message":"x"}', "--config", config], {
    encoding: "utf8",
  });
  const elapsed = performance.now() - start;
  if (run.status !== 0 || run.stdout.trim() !== "x") {
    throw new Error(`${target.label}: exit ${run.status}: ${run.stderr.trim()}`);
  }
  return elapsed;
}

try {
  for (const target of targets) runOnce(target); // warm the file cache
  for (let r = 0; r < RUNS; r++) for (const target of targets) target.times.push(runOnce(target));
  const base = median(targets[0]!.times);
  console.log(`mcplex call, ${RUNS} runs per target, interleaved (median wall time per call)`);
  for (const target of targets) {
    const m = median(target.times);
    console.log(`  ${target.label.padEnd(44)} ${m.toFixed(0).padStart(6)} ms   ${(m / base).toFixed(2)}x`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
