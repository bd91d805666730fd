#!/usr/bin/env node
// The official SDK v2 as a proxy, for bench:compare: the SDK v2 Client connected to the upstream
// over stdio, behind an SDK v2 Server that forwards tools/list and tools/call to it, served
// over stdio or Streamable HTTP (createMcpHandler, its 2025 stateless serving: a fresh Server
// per request, as the SDK v2 serves 2025 clients). Written as the SDK's guides show, nothing tuned.
//   node bench/compare/sdk-proxy.mjs stdio -- COMMAND [ARGS...]
//   node bench/compare/sdk-proxy.mjs http --port P -- COMMAND [ARGS...]
import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createMcpHandler, Server } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

const front = process.argv[2];
const [command, ...args] = process.argv.slice(process.argv.indexOf("--") + 1);
const client = new Client({ name: "sdk-proxy", version: "1" });
await client.connect(new StdioClientTransport({ command, args }));

function proxyServer() {
  const server = new Server({ name: "sdk-proxy", version: "1" }, { capabilities: { tools: {} } });
  server.setRequestHandler("tools/list", (request) => client.listTools(request.params));
  server.setRequestHandler("tools/call", (request) => client.callTool(request.params));
  return server;
}

if (front === "stdio") {
  await proxyServer().connect(new StdioServerTransport());
} else if (front === "http") {
  const handler = createMcpHandler(() => proxyServer());
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === "string") headers.set(name, value);
      const body = req.method === "POST" ? Buffer.concat(chunks) : undefined;
      const url = `http://${req.headers.host}${req.url}`;
      const response = await handler.fetch(new Request(url, { method: req.method, headers, body }));
      const out = Buffer.from(await response.arrayBuffer());
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(out);
    });
  });
  server.keepAliveTimeout = 65_000;
  const at = process.argv.indexOf("--port");
  server.listen(Number(process.argv[at + 1]), "127.0.0.1", () =>
    console.log(`url http://127.0.0.1:${server.address().port}/mcp`),
  );
} else {
  throw new Error("usage: sdk-proxy.mjs stdio|http [--port P] -- COMMAND [ARGS...]");
}
