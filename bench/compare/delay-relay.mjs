#!/usr/bin/env node
// A TCP relay that makes a server on loopback feel remote: every chunk is held `--delay` ms in
// each direction (so a round trip costs twice that), and a new connection's first bytes wait
// one round trip more, as a TCP handshake's would. It understands nothing of what it carries.
// Prints `url <url>` once listening.
//   node bench/compare/delay-relay.mjs --to http://127.0.0.1:P/mcp --delay MS [--port P]
import { connect, createServer } from "node:net";

const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const target = new URL(arg("--to"));
const delay = Number(arg("--delay") ?? 40);

/** Copies `from` to `to`, each chunk `ms` later, in order; the first not before `notBefore`. */
function delayed(from, to, ms, notBefore = 0) {
  const queue = [];
  const drain = () => {
    while (queue.length > 0 && queue[0].at <= performance.now() + 0.5) {
      const { chunk } = queue.shift();
      if (chunk === null) to.end();
      else if (!to.destroyed) to.write(chunk);
    }
    if (queue.length > 0) setTimeout(drain, queue[0].at - performance.now());
  };
  const push = (chunk) => {
    const at = Math.max(performance.now() + ms, notBefore);
    queue.push({ at, chunk });
    if (queue.length === 1) setTimeout(drain, at - performance.now());
  };
  from.on("data", push);
  from.on("end", () => push(null));
}

const server = createServer((client) => {
  const handshake = performance.now() + 2 * delay;
  const upstream = connect(Number(target.port), target.hostname);
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  delayed(client, upstream, delay, handshake + delay);
  delayed(upstream, client, delay);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
  client.on("close", () => setTimeout(() => upstream.destroy(), delay));
  upstream.on("close", () => setTimeout(() => client.destroy(), delay));
});
server.listen(Number(arg("--port") ?? 0), "127.0.0.1", () =>
  console.log(`url http://127.0.0.1:${server.address().port}${target.pathname}`),
);
process.on("SIGTERM", () => process.exit(0));
process.on("SIGINT", () => process.exit(0));
