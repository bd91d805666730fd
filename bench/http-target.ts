/**
 * One HTTP target of bench/gateway-http-bench.ts, run in its own process:
 *   mcplex  the gateway's HTTP front with an in-process echo tool (`--no-dashboard`: without it)
 *   sdk     the official SDK v2 createMcpHandler serving the same tool
 *   bare    a bare node:http JSON echo (the floor)
 * Prints `url <url>` on stdout when listening. mcplex is imported from dist/ (run `npm run build`
 * first), as it ships: run from src/ through tsx, esbuild's name-keeping helper (`__name`) took 1.3%
 * of its profile.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { dashboardPage } from "../dist/dashboard/dashboard.js";
import { startHttpFront } from "../dist/fronts/http-front.js";
import { Gateway } from "../dist/gateway/gateway.js";
import { toNodeListener } from "../test/fixtures/servers/node-fetch-listener.js";
import { startEchoHub } from "./echo-hub.mjs";

const kind = process.argv[2];
const echo = (text: string) => ({ content: [{ type: "text" as const, text }] });

async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

let url: string;
if (kind === "mcplex") {
  const hub = await startEchoHub();
  const front = await startHttpFront(new Gateway(hub), {
    port: 0,
    websocket: false,
    dashboard: process.argv.includes("--no-dashboard") ? false : dashboardPage,
  });
  url = front.url;
} else if (kind === "sdk") {
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "echo", version: "1" });
    server.registerTool("echo", { inputSchema: z.object({ message: z.string() }) }, async ({ message }) =>
      echo(message),
    );
    return server;
  });
  url = await listen(createServer(toNodeListener((request) => handler.fetch(request))));
} else if (kind === "bare") {
  url = await listen(
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const m = JSON.parse(Buffer.concat(chunks).toString()) as {
          id: number;
          params: { arguments: { message: string } };
        };
        const body = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: echo(m.params.arguments.message) });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
      });
    }),
  );
} else {
  throw new Error("usage: http-target.ts mcplex|sdk|bare");
}
process.stdout.write(`url ${url}\n`);
