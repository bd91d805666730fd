// How deep the way in of one call is: the frames of mcplex's own code (and the files they are
// in) between the HTTP front receiving a 2026 `tools/call` and the stdio transport writing it
// to the upstream, read from the stack (with V8's async frames) at that write. A structural
// figure, not a timing: it reads the same on any machine.
//
// And how wide the whole call is: every file of src/ with a function that ran while one call
// went in and its answer came out (the third call: the first loads and compiles, and fetch opens
// a second connection for the second, so the third is a call on a connection already admitted),
// from V8's precise coverage with call counts. Background work of those milliseconds (a timer) could add a
// file; none runs in this set-up.
//
//   npx tsx bench/call-path.ts   (before src/assembly/: import the gateway from src/gateway/index.js)
import { Session } from "node:inspector/promises";
import { resolve } from "node:path";
import { ANSWERING_CAPABILITIES, Gateway, startHttpFront } from "../src/assembly/entries/gateway.js";
import { Catalog } from "../src/catalog/catalog.js";
import { Hub } from "../src/hub/hub.js";
import { StdioClientTransport } from "../src/upstream/stdio-transport.js";

Error.stackTraceLimit = 200;
let stack: string | undefined;
const send = StdioClientTransport.prototype.send;
StdioClientTransport.prototype.send = function (this: StdioClientTransport, message) {
  if ((message as { method?: string }).method === "tools/call") stack ??= new Error().stack;
  return send.call(this, message);
};

let lookups = 0;
const resolveTool = Catalog.prototype.resolveTool;
Catalog.prototype.resolveTool = function (this: Catalog, name, profile) {
  lookups++;
  return resolveTool.call(this, name, profile);
};

const config = {
  source: "bench",
  format: "mcplex",
  profiles: {},
  tokens: [],
  secrets: [],
  servers: [
    {
      name: "echo",
      transport: "stdio",
      command: process.execPath,
      args: [resolve("bench/echo-server.mjs")],
      env: {},
      enabled: true,
      lazy: false,
      timeout: 10_000,
      startTimeout: 20_000,
      tools: {},
    },
  ],
} as never;
const hub = new Hub({ config, clientCapabilities: ANSWERING_CAPABILITIES });
const gateway = new Gateway(hub, { ready: hub.start() });
const front = await startHttpFront(gateway, { host: "127.0.0.1", port: 0, dashboard: false });
await gateway.ready;
lookups = 0;
const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
};
async function call(id: number): Promise<Response> {
  return await fetch(front.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "echo__echo",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "echo__echo", arguments: { message: "hi" }, _meta: meta },
    }),
  });
}

const response = await call(1);
console.log("answer:", response.status, (await response.text()).slice(0, 80));
const ours = (stack ?? "")
  .split("\n")
  .slice(1)
  .map((line) => line.trim())
  .filter((line) => line.includes("/src/"));
const files = new Set(ours.map((line) => line.replace(/.*\/src\//, "src/").replace(/:\d+:\d+\)?$/, "")));
for (const line of ours) console.log("  ", line.replace(/\(.*\/src\//, "(src/"));
console.log(`frames of ours: ${ours.length}; files: ${files.size}; catalog lookups of the tool: ${lookups}`);
for (const file of [...files].sort()) console.log("  ", file);

// The whole call: the third one, with V8 counting every function it runs.
await (await call(2)).text();
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
await session.post("Profiler.takePreciseCoverage"); // counts start from here
const third = await call(3);
await third.text();
const { result: scripts } = await session.post("Profiler.takePreciseCoverage");
await session.post("Profiler.stopPreciseCoverage");
session.disconnect();
const ran = scripts
  .filter(
    (script) => script.url.includes("/src/") && script.functions.some((f) => (f.ranges[0]?.count ?? 0) > 0),
  )
  .map((script) => script.url.replace(/.*\/src\//, "src/"))
  .sort();
const folders = new Set(ran.map((file) => file.split("/").slice(0, -1).join("/")));
console.log(`files the whole call runs through (in and out): ${ran.length}, in ${folders.size} folders`);
for (const file of ran) console.log("  ", file);
await front.close(0);
gateway.close();
await hub.close();
