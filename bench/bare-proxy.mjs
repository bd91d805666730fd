// The floor of one process hop, for bench/cluster-bench.ts: a bare node:http proxy in its own
// process (body read whole, one keep-alive request to the target, answer relayed whole), with
// none of a replica's work (admission, session ids, credentials). Prints `url <url>`.
//   node bench/bare-proxy.mjs TARGET_URL
import { Agent, createServer, request } from "node:http";

const target = new URL(process.argv[2]);
const agent = new Agent({ keepAlive: true });
const server = createServer((req, res) => {
  const body = [];
  req.on("data", (chunk) => body.push(chunk));
  req.on("end", () => {
    const out = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
        agent,
      },
      (answer) => {
        const chunks = [];
        answer.on("data", (chunk) => chunks.push(chunk));
        answer.on("end", () => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks));
        });
      },
    );
    out.on("error", () => res.writeHead(502).end());
    out.end(Buffer.concat(body));
  });
});
server.listen(0, "127.0.0.1", () => console.log(`url http://127.0.0.1:${server.address().port}/mcp`));
