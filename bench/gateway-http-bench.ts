/**
 * The gateway's HTTP front under load: 2026 stateless `tools/call` requests answered
 * with JSON, 64 keep-alive connections, an echo tool. Three targets, each in its own
 * process, measured in one run with the same load generator:
 *   mcplex (gateway front, in-process echo tool), the official SDK v2 createMcpHandler,
 *   and a bare node:http JSON echo as the floor.
 *
 *   npx tsx bench/gateway-http-bench.ts [--seconds S]
 */
import { spawn } from "node:child_process";
import { Agent, request } from "node:http";

const argSeconds = process.argv.indexOf("--seconds");
const SECONDS = argSeconds === -1 ? 5 : Number(process.argv[argSeconds + 1]);
const CONNECTIONS = 64;
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

async function start(kind: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", new URL("./http-target.ts", import.meta.url).pathname, kind],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout!.setEncoding("utf8").on("data", (c: string) => {
      text += c;
      const m = /url (\S+)/.exec(text);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`${kind} target exited with ${code}`)));
  });
  return { url, stop: () => child.kill() };
}

function call(agent: Agent, url: URL, id: number): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { _meta: META, name: "echo", arguments: { message: "hi" } },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { ...HEADERS, "content-length": Buffer.byteLength(body) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (c: string) => (text += c));
        res.on("end", () =>
          res.statusCode === 200 && text.includes('"hi"')
            ? resolve()
            : reject(new Error(`${res.statusCode} ${text.slice(0, 200)}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function load(target: string): Promise<number> {
  const url = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  for (let i = 0; i < 200; i++) await call(agent, url, i); // warm up
  let done = 0;
  let id = 1000;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        await call(agent, url, id++);
        done++;
      }
    }),
  );
  const rate = done / ((performance.now() - started) / 1000);
  agent.destroy();
  return rate;
}

const rates: Record<string, number> = {};
for (const kind of ["bare", "sdk", "mcplex"]) {
  const target = await start(kind);
  try {
    rates[kind] = await load(target.url);
  } finally {
    target.stop();
  }
}
const fmt = (n: number) => n.toFixed(0).padStart(8);
console.log(
  `2026 stateless tools/call, JSON answers, ${CONNECTIONS} keep-alive connections, ${SECONDS} s each\n`,
);
console.log(`bare node:http JSON echo   ${fmt(rates.bare!)} calls/s`);
console.log(`SDK v2 createMcpHandler    ${fmt(rates.sdk!)} calls/s`);
console.log(`mcplex gateway front       ${fmt(rates.mcplex!)} calls/s\n`);
console.log(`mcplex / SDK    ${(rates.mcplex! / rates.sdk!).toFixed(2)}   (target >= 5)`);
console.log(`mcplex / bare   ${(rates.mcplex! / rates.bare!).toFixed(2)}   (target >= 0.50)`);
