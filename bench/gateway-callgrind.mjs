#!/usr/bin/env node
// Instructions per call through `mcplex serve --stdio` (the gateway process only), counted by
// valgrind's callgrind: repeatable on a shared machine where timings are not, so it shows
// what one change to the message path is worth. Runs N1 and N2 calls and prints
// (instructions(N2) - instructions(N1)) / (N2 - N1), which leaves start-up out; every run
// first makes 5000 calls, because the JIT's own work shows in the count for the first few
// thousand calls (a 1000-vs-5000 window counted 159k per call, half of it TurboFan; after
// the warm-up the same build counts 66k). The measured calls go in rounds: `--in-flight`
// requests (64 by default) written at once, all answered before the next round, so every
// run batches alike (two runs side by side: 56,316 and 56,036); `--in-flight 1` sends every
// message alone. On a loaded machine a full GC or a late TurboFan compile in one of the two runs
// moves the default window's figure by 10-20% (about 10k per call of 8000); `2000 42000` spreads
// them over 40,000 calls (two runs of one build: 88.2k and 89.6k).
//   npm run build && node bench/gateway-callgrind.mjs [N1] [N2] [--in-flight K]   (about 4 minutes)
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const flightAt = args.indexOf("--in-flight");
const IN_FLIGHT = flightAt === -1 ? 64 : Number(args.splice(flightAt, 2)[1]);
const [n1 = 2000, n2 = 10000] = args.map(Number);
/** Calls made first in every run (64 in flight), so that the JIT has done its work. */
const WARM = 5000;
const root = new URL("..", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "mcplex-callgrind-"));
const config = join(dir, "mcplex.yaml");
writeFileSync(
  config,
  `servers:\n  echo:\n    command: ${process.execPath}\n    args: [${join(root, "bench/echo-server.mjs")}]\n`,
);

async function instructions(calls) {
  const out = join(dir, `cg.${calls}`);
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      `--callgrind-out-file=${out}`,
      process.execPath,
      // V8 then compiles and collects on the main thread and drops its time-driven GC
      // heuristics: runs repeat within about 3% (without it, 15%).
      "--predictable",
      join(root, "dist/bin/mcplex.js"),
      "serve",
      "--stdio",
      "--config",
      config,
    ],
    { stdio: ["pipe", "pipe", "ignore"] },
  );
  const pending = new Map();
  let buffer = "";
  let id = 0;
  child.stdout.setEncoding("utf8").on("data", (chunk) => {
    buffer += chunk;
    let start = 0;
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n", start)) {
      const m = JSON.parse(buffer.slice(start, nl));
      start = nl + 1;
      if (m.id !== undefined) pending.get(m.id)?.(m);
    }
    buffer = buffer.slice(start);
  });
  const request = (method, params) =>
    new Promise((resolve) => {
      pending.set(++id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  await request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "cg", version: "1" },
  });
  await request("tools/list", {});
  const run = async (count, inFlight) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next++ < count)
          await request("tools/call", { name: "echo__echo", arguments: { message: "hi" } });
      }),
    );
  };
  /** `count` calls in rounds of `inFlight` written at once, each round answered in full before the next. */
  const lockstep = async (count, inFlight) => {
    for (let done = 0; done < count; done += inFlight) {
      const round = [];
      let text = "";
      for (let i = 0; i < Math.min(inFlight, count - done); i++) {
        const n = ++id;
        round.push(new Promise((resolve) => pending.set(n, resolve)));
        text += `${JSON.stringify({ jsonrpc: "2.0", id: n, method: "tools/call", params: { name: "echo__echo", arguments: { message: "hi" } } })}\n`;
      }
      child.stdin.write(text);
      await Promise.all(round);
    }
  };
  await run(WARM, 64);
  await lockstep(calls, IN_FLIGHT);
  child.stdin.end();
  await new Promise((resolve) => child.on("close", resolve));
  const file = readdirSync(dir).find((f) => f.startsWith(`cg.${calls}`));
  return Number(/^summary: (\d+)/m.exec(readFileSync(join(dir, file), "utf8"))[1]);
}

const a = await instructions(n1);
const b = await instructions(n2);
if (!process.env.KEEP_CG) rmSync(dir, { recursive: true, force: true });
else console.log("kept", dir);
console.log(
  `gateway instructions per tools/call: ${Math.round((b - a) / (n2 - n1))} (callgrind, ${n1} vs ${n2} calls, ${IN_FLIGHT} in flight)`,
);
