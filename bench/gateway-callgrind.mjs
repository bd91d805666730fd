#!/usr/bin/env node
// Instructions per call through `mcplex serve --stdio` (the gateway process only), counted by
// valgrind's callgrind: repeatable on a shared machine where timings are not, so it shows
// what one change to the message path is worth. Runs N1 and N2 calls and prints
// (instructions(N2) - instructions(N1)) / (N2 - N1), which leaves start-up out.
//   npm run build && node bench/gateway-callgrind.mjs [N1] [N2]     (about 2 minutes)
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [n1 = 1000, n2 = 5000] = process.argv.slice(2).map(Number);
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
      join(root, "dist/cli/main.js"),
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
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next++ < calls)
        await request("tools/call", { name: "echo__echo", arguments: { message: "hi" } });
    }),
  );
  child.stdin.end();
  await new Promise((resolve) => child.on("close", resolve));
  const file = readdirSync(dir).find((f) => f.startsWith(`cg.${calls}`));
  return Number(/^summary: (\d+)/m.exec(readFileSync(join(dir, file), "utf8"))[1]);
}

const a = await instructions(n1);
const b = await instructions(n2);
rmSync(dir, { recursive: true, force: true });
console.log(
  `gateway instructions per tools/call: ${Math.round((b - a) / (n2 - n1))} (callgrind, ${n1} vs ${n2} calls)`,
);
