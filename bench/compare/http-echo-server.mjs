#!/usr/bin/env node
// The HTTP "direct" of bench:compare: a bare node:http server speaking Streamable HTTP with
// JSON answers (no sessions, no SSE), one `echo` tool, as lean as bench/echo-server.mjs is over
// stdio. Prints `url <url>` once listening.
//   node bench/compare/http-echo-server.mjs [--port P]
import { createServer } from "node:http";

const tools = [
  {
    name: "echo",
    description: "Echoes its message",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
  },
];

function result(m) {
  switch (m.method) {
    case "initialize":
      return {
        protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "echo", version: "1" },
      };
    case "tools/list":
      return { tools };
    case "tools/call":
      return { content: [{ type: "text", text: String(m.params.arguments?.message) }] };
    default:
      return {};
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const m = JSON.parse(Buffer.concat(chunks).toString());
    if (m.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const body = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: result(m) });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
const at = process.argv.indexOf("--port");
server.listen(at === -1 ? 0 : Number(process.argv[at + 1]), "127.0.0.1", () =>
  console.log(`url http://127.0.0.1:${server.address().port}/mcp`),
);
