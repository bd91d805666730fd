#!/usr/bin/env node
// An OTLP/HTTP receiver that accepts everything and keeps nothing: bench:compare's telemetry
// layer exports its spans here, so that the exporter does all of its work (serializing, the
// POST, the answer) while the receiver costs as little as it can. Prints `url <url>` once
// listening. Counts the bodies it got and their bytes, and prints them on SIGTERM.
import { createServer } from "node:http";

let posts = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on("data", (chunk) => (bytes += chunk.length));
  req.on("end", () => {
    posts++;
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`url http://127.0.0.1:${server.address().port}\n`));
process.on("SIGTERM", () => {
  process.stderr.write(`otlp sink: ${posts} posts, ${bytes} bytes\n`);
  process.exit(0);
});
