#!/usr/bin/env node
// The floor of any gateway process between a stdio client and a stdio server: a Node
// process that starts the server and copies bytes both ways, understanding nothing
// (`--json`: parses every line and writes it back, the least a gateway that reads its
// messages can do). Benchmarks run it beside mcplex so that the cost of one more process
// in the path (four handoffs per call instead of two) shows apart from mcplex's own.
//   node bench/relay.mjs [--json] SERVER_COMMAND [ARGS...]
import { spawn } from "node:child_process";

const json = process.argv[2] === "--json";
const [command, ...args] = process.argv.slice(json ? 3 : 2);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });

/** Copies `from` to `to` line by line, each line parsed and stringified again. */
function relayJson(from, to) {
  let rest = "";
  from.setEncoding("utf8");
  from.on("data", (chunk) => {
    const text = rest + chunk;
    let out = "";
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      out += `${JSON.stringify(JSON.parse(text.slice(start, nl)))}\n`;
      start = nl + 1;
    }
    rest = text.slice(start);
    if (out !== "") to.write(out);
  });
}

if (json) {
  relayJson(process.stdin, child.stdin);
  relayJson(child.stdout, process.stdout);
} else {
  process.stdin.pipe(child.stdin);
  child.stdout.pipe(process.stdout);
}
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code) => process.exit(code ?? 0));
