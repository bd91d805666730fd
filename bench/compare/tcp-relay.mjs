#!/usr/bin/env node
// The HTTP byte relay of bench:compare, the floor of any process between an HTTP client and
// server: it starts bench/compare/http-echo-server.mjs as its child and copies the bytes of
// each TCP connection to it and back, understanding nothing.
//   node bench/compare/tcp-relay.mjs --port P
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";

const echo = spawn(process.execPath, [new URL("./http-echo-server.mjs", import.meta.url).pathname], {
  stdio: ["ignore", "pipe", "inherit"],
});
const target = await new Promise((resolve, reject) => {
  let text = "";
  echo.stdout.setEncoding("utf8").on("data", (c) => {
    text += c;
    const m = /url (\S+)/.exec(text);
    if (m) resolve(new URL(m[1]));
  });
  echo.once("exit", (code) => reject(new Error(`the echo server exited with ${code}`)));
});

const server = createServer((client) => {
  const upstream = connect(Number(target.port), target.hostname);
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  client.pipe(upstream).pipe(client);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
});
const at = process.argv.indexOf("--port");
server.listen(at === -1 ? 0 : Number(process.argv[at + 1]), "127.0.0.1", () =>
  console.log(`url http://127.0.0.1:${server.address().port}/mcp`),
);
const stop = () => {
  echo.kill();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
