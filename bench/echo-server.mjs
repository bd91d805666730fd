#!/usr/bin/env node
// A minimal MCP echo server over stdio: newline JSON, 2025 handshake, one `echo` tool.
// Hand-written and lean (no readline, one write per chunk read) so that benchmarks measure
// the client side, not the server.

const tools = [
  {
    name: "echo",
    description: "Echoes its message",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
  },
];

function answer(m) {
  switch (m.method) {
    case "initialize":
      return {
        jsonrpc: "2.0",
        id: m.id,
        result: {
          protocolVersion: m.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "echo", version: "1" },
        },
      };
    case "tools/list":
      return { jsonrpc: "2.0", id: m.id, result: { tools } };
    case "tools/call":
      return {
        jsonrpc: "2.0",
        id: m.id,
        result: { content: [{ type: "text", text: String(m.params.arguments?.message) }] },
      };
    case "ping":
      return { jsonrpc: "2.0", id: m.id, result: {} };
    default:
      return { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } };
  }
}

/** Answers every complete line of `text`; returns the unfinished rest. */
function serve(text) {
  let out = "";
  let start = 0;
  for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
    const line = text.slice(start, nl);
    start = nl + 1;
    if (line === "") continue;
    const m = JSON.parse(line);
    if (m.id !== undefined) out += `${JSON.stringify(answer(m))}\n`;
  }
  if (out !== "") process.stdout.write(out);
  return text.slice(start);
}

// `--delay-ms N`: take N ms before answering anything, like a server that is slow to start.
const delayAt = process.argv.indexOf("--delay-ms");
let held = delayAt === -1 ? undefined : "";
if (held !== undefined) {
  setTimeout(
    () => {
      const waiting = held;
      held = undefined;
      rest = serve(rest + waiting);
    },
    Number(process.argv[delayAt + 1]),
  );
}
let rest = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  if (held !== undefined) held += chunk;
  else rest = serve(rest + chunk);
});
process.stdin.on("end", () => process.exit(0));
