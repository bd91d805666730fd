#!/usr/bin/env node
// Instructions per 2026 `tools/call` through the HTTP front (dashboard on, an in-process echo
// tool, as bench/http-target.ts serves it) and through a bare node:http JSON echo, counted by
// valgrind's callgrind in the target process only: what bench/gateway-http-bench.ts measures in
// calls/s, without the machine's load in it. One call in flight; each target runs twice (N1 and
// N2 calls after the same warm-up) and the difference per call is printed, which leaves start-up
// out. Compiles and full GCs still land in the window now and then: read the per-function diff
// of the kept files (KEEP_CG=1) before trusting a difference under about 20k.
//   npm run build && node bench/gateway-http-callgrind.mjs [WARM] [N1] [N2]   (about 5 minutes)
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const echo = (text) => ({ content: [{ type: "text", text }] });

if (process.argv[2] === "--target") {
  // The target process (under valgrind): prints `url <url>` once it listens.
  let url;
  if (process.argv[3] === "mcplex") {
    const dist = new URL("../dist/", import.meta.url).href;
    const { Gateway } = await import(`${dist}gateway/gateway.js`);
    const { startHttpFront } = await import(`${dist}fronts/http-front.js`);
    const { Hub } = await import(`${dist}hub/hub.js`);
    const { LocalServer } = await import(`${dist}upstream/local-server.js`);
    const local = new LocalServer("echo", [
      {
        name: "echo",
        inputSchema: { type: "object", properties: { message: { type: "string" } } },
        handler: (args) => echo(String(args.message)),
      },
    ]);
    const server = { name: "echo", transport: "local", server: local, prefix: "", enabled: true };
    const hub = new Hub({
      config: {
        source: "bench",
        format: "mcplex",
        profiles: {},
        tokens: [],
        secrets: [],
        servers: [{ ...server, lazy: false, timeout: 60_000, startTimeout: 60_000, tools: {} }],
      },
    });
    await hub.start();
    url = (await startHttpFront(new Gateway(hub), { port: 0, websocket: false })).url;
  } else {
    const server = createServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const m = JSON.parse(Buffer.concat(chunks).toString());
        const body = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: echo(m.params.arguments.message) });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
      });
    });
    server.keepAliveTimeout = 65_000;
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${server.address().port}/mcp`;
  }
  process.stdout.write(`url ${url}\n`);
} else {
  const [warm = 6000, n1 = 1000, n2 = 4000] = process.argv.slice(2).map(Number);
  const dir = mkdtempSync(join(tmpdir(), "mcplex-http-callgrind-"));
  const META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
  };
  const HEADERS = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "echo",
  };

  async function instructions(kind, calls) {
    const out = join(dir, `cg.${kind}.${calls}`);
    const child = spawn(
      "valgrind",
      [
        "--tool=callgrind",
        `--callgrind-out-file=${out}`,
        process.execPath,
        // As in gateway-callgrind.mjs: compiles and collects on the main thread, no time-driven GC.
        "--predictable",
        new URL(import.meta.url).pathname,
        "--target",
        kind,
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    const url = await new Promise((resolve) => {
      let text = "";
      child.stdout.setEncoding("utf8").on("data", (chunk) => {
        text += chunk;
        const m = /url (\S+)/.exec(text);
        if (m) resolve(new URL(m[1]));
      });
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let id = 0;
    const call = () =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: { _meta: META, name: "echo", arguments: { message: "hi" } },
        });
        const req = httpRequest(
          url,
          { method: "POST", agent, headers: { ...HEADERS, "content-length": Buffer.byteLength(body) } },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (c) => {
              text += c;
            });
            res.on("end", () => (text.includes('"hi"') ? resolve() : reject(new Error(text))));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    for (let i = 0; i < warm + calls; i++) await call();
    agent.destroy();
    // Valgrind writes the counts when the target ends, by a signal too.
    child.kill("SIGINT");
    await new Promise((resolve) => child.on("close", resolve));
    return Number(/^summary: (\d+)/m.exec(readFileSync(out, "utf8"))[1]);
  }

  const perCall = {};
  for (const kind of ["bare", "mcplex"]) {
    const a = await instructions(kind, n1);
    const b = await instructions(kind, n2);
    perCall[kind] = Math.round((b - a) / (n2 - n1));
  }
  if (!process.env.KEEP_CG) rmSync(dir, { recursive: true, force: true });
  else console.log("kept", dir);
  console.log(
    `instructions per HTTP tools/call (callgrind, ${n1} vs ${n2} calls after ${warm}, one in flight)`,
  );
  console.log(`bare node:http JSON echo   ${perCall.bare}`);
  console.log(`mcplex gateway front       ${perCall.mcplex}`);
  console.log(`bare / mcplex              ${(perCall.bare / perCall.mcplex).toFixed(2)}`);
}
