#!/usr/bin/env node
// Instructions per 2026 `tools/call` on `/mcp` of the gateway's HTTP front, and per call of a bare
// node:http JSON echo doing the floor's work (bench/http-target.ts's `bare`), counted by valgrind's
// callgrind in the server process only; the client (this process) stays outside callgrind. The
// front serves as in bench/gateway-http-bench.ts: an in-process echo tool, the dashboard on unless
// `--no-dashboard`. Both targets are plain node on dist/ (run `npm run build` first) with nothing
// else loaded: no tsx and no SDK server in the process, as bench/gateway-http-callgrind.ts had
// (its larger heap made each full GC dearer; it read 241.6k to 293.8k for one build).
//
// One call in flight, as bench/gateway-callgrind.mjs --in-flight 1. After WARM calls (V8's tiers
// settle in the first few thousand), the count is zeroed and dumped around each window of CALLS
// calls (`callgrind_control -z`, `-d`): start-up and exit stay out, and each window is a figure of
// its own. `--predictable` keeps V8's compiles and collections on the main thread and drops its
// time-driven GC. A full GC in one window and not the next still moves it by up to 10%: compare the
// lowest windows, and the per-function counts of the kept files (KEEP_CG=1, callgrind_annotate).
//   npm run build && node bench/gateway-http-callgrind.mjs [WARM] [CALLS] [WINDOWS] [--no-dashboard]
//   (defaults 10000 5000 2: a shorter warm-up leaves TurboFan compiling in the counted windows, up to 24k instructions a call)
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);

if (args[0] === "--serve") {
  // The target, run under callgrind: prints `url <url>` when listening.
  const url = args[1] === "bare" ? await serveBare() : await serveMcplex(args.includes("--no-dashboard"));
  process.stdout.write(`url ${url}\n`);
} else {
  await main();
}

/** bench/http-target.ts's floor: parse the body, echo the argument, one JSON answer. */
async function serveBare() {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const m = JSON.parse(Buffer.concat(chunks).toString());
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: m.id,
        result: { content: [{ type: "text", text: m.params.arguments.message }] },
      });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${server.address().port}/mcp`;
}

/** bench/http-target.ts's `mcplex`: the HTTP front over bench/echo-hub.mjs's hub. */
async function serveMcplex(noDashboard) {
  const dist = new URL("../dist/", import.meta.url);
  const { Gateway } = await import(new URL("gateway/gateway.js", dist).href);
  const { startHttpFront } = await import(new URL("fronts/http-front.js", dist).href);
  const { dashboardPage } = await import(new URL("dashboard/dashboard.js", dist).href);
  const { startEchoHub } = await import(new URL("echo-hub.mjs", import.meta.url).href);
  const hub = await startEchoHub();
  const front = await startHttpFront(new Gateway(hub), {
    port: 0,
    websocket: false,
    dashboard: noDashboard ? false : dashboardPage,
  });
  return front.url;
}

/** One POST over the kept-alive agent (bench/http-post.ts, with the 2026 headers of its calls). */
function post(agent, url, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "echo",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (c) => (text += c));
        res.on("end", () => (res.statusCode === 200 ? resolve(text) : reject(new Error(text))));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function main() {
  const noDashboard = args.includes("--no-dashboard");
  const [warm = 10000, calls = 5000, windows = 2] = args.filter((a) => !a.startsWith("--")).map(Number);
  const dir = mkdtempSync(join(tmpdir(), "mcplex-http-callgrind-"));
  const self = new URL(import.meta.url).pathname;
  const META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
  };
  /** Tells the target's callgrind to `zero` its counts or `dump` them to a file of their own. */
  const control = (pid, command) =>
    new Promise((resolve, reject) =>
      execFile("callgrind_control", [command === "zero" ? "-z" : "-d", String(pid)], (error) =>
        error ? reject(error) : resolve(),
      ),
    );

  /** Instructions per call of each window of `calls` calls, after `warm` calls. */
  const instructions = async (kind) => {
    const out = join(dir, `cg.${kind}`);
    const child = spawn(
      "valgrind",
      [
        "--tool=callgrind",
        `--callgrind-out-file=${out}`,
        process.execPath,
        "--predictable",
        self,
        "--serve",
        kind,
        ...(noDashboard ? ["--no-dashboard"] : []),
      ],
      // Every Node process parses NODE_EXTRA_CA_CERTS at start: left out, the target starts sooner.
      { stdio: ["ignore", "pipe", "ignore"], env: { ...process.env, NODE_EXTRA_CA_CERTS: "" } },
    );
    const url = await new Promise((resolve, reject) => {
      let text = "";
      child.stdout.setEncoding("utf8").on("data", (chunk) => {
        text += chunk;
        const m = /url (\S+)/.exec(text);
        if (m) resolve(new URL(m[1]));
      });
      child.once("exit", (code) => reject(new Error(`${kind} target exited with ${code}`)));
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let id = 0;
    const run = async (count) => {
      for (let i = 0; i < count; i++) {
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: { _meta: META, name: "echo", arguments: { message: "hi" } },
        });
        const text = await post(agent, url, body);
        if (!text.includes('"hi"')) throw new Error(text);
      }
    };
    await run(warm);
    const perCall = [];
    for (let w = 1; w <= windows; w++) {
      // Counted from the zero to the dump: this window's calls alone, no start-up, no exit.
      await control(child.pid, "zero");
      await run(calls);
      await control(child.pid, "dump");
      // callgrind numbers its dumps: cg.<kind>.1, .2, ...
      const counts = readFileSync(`${out}.${w}`, "utf8");
      perCall.push(Math.round(Number(/^summary: (\d+)/m.exec(counts)[1]) / calls));
    }
    agent.destroy();
    child.removeAllListeners("exit");
    const closed = new Promise((resolve) => child.on("close", resolve));
    child.kill("SIGINT");
    await closed;
    return perCall;
  };

  const perCall = {};
  for (const kind of ["bare", "mcplex"]) perCall[kind] = await instructions(kind);
  if (!process.env.KEEP_CG) rmSync(dir, { recursive: true, force: true });
  else console.log("kept", dir);
  const low = (kind) => Math.min(...perCall[kind]);
  console.log(
    `instructions per /mcp tools/call (callgrind, ${windows} windows of ${calls} calls after ${warm}, one in flight${noDashboard ? ", dashboard off" : ""})`,
  );
  console.log(`bare node:http JSON echo   ${perCall.bare.join("  ")}`);
  console.log(`mcplex gateway front       ${perCall.mcplex.join("  ")}`);
  console.log(`bare / mcplex              ${(low("bare") / low("mcplex")).toFixed(2)}   (lowest windows)`);
}
