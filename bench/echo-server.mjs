#!/usr/bin/env node
// A minimal MCP echo server over stdio: newline JSON, 2025 handshake, one `echo` tool.
// Hand-written so that benchmarks measure the client side, not the server.
import { createInterface } from "node:readline";

const tools = [
  {
    name: "echo",
    description: "Echoes its message",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
  },
];
const out = [];
let scheduled = false;
function send(message) {
  out.push(JSON.stringify(message));
  if (!scheduled) {
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      process.stdout.write(`${out.join("\n")}\n`);
      out.length = 0;
    });
  }
}
// `--delay-ms N`: take N ms before answering anything, like a server that is slow to start.
const delayAt = process.argv.indexOf("--delay-ms");
const ready = new Promise((r) => setTimeout(r, delayAt === -1 ? 0 : Number(process.argv[delayAt + 1])));
let isReady = delayAt === -1;
ready.then(() => {
  isReady = true;
});
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line === "") return;
  if (!isReady) {
    ready.then(() => handle(line));
    return;
  }
  handle(line);
});
function handle(line) {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  switch (m.method) {
    case "initialize":
      send({
        jsonrpc: "2.0",
        id: m.id,
        result: {
          protocolVersion: m.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "echo", version: "1" },
        },
      });
      return;
    case "tools/list":
      send({ jsonrpc: "2.0", id: m.id, result: { tools } });
      return;
    case "tools/call":
      send({
        jsonrpc: "2.0",
        id: m.id,
        result: { content: [{ type: "text", text: String(m.params.arguments?.message) }] },
      });
      return;
    case "ping":
      send({ jsonrpc: "2.0", id: m.id, result: {} });
      return;
    default:
      send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
}
process.stdin.on("end", () => process.exit(0));
