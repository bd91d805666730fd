// The owner of bench/replica-link-bench.ts, in its own process: a node:http server (what a
// replica runs) that answers every JSON-RPC POST with an event stream, as a replica answers a
// 2025 request that accepts one: the head, one `message` event with the result, then the end
// (chunked). Prints `url <url>` once listening.
//   node bench/sse-owner.mjs
import { createServer } from "node:http";

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const { id } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const result = { content: [{ type: "text", text: "hi" }] };
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`);
    res.end();
  });
});
// Longer than any pause of the bench: no path pays for a reconnect the others do not.
server.keepAliveTimeout = 600_000;
server.listen(0, "127.0.0.1", () => console.log(`url http://127.0.0.1:${server.address().port}/mcp`));
