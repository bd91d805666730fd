import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * Whether `host:port` is on a sandbox's network list: `host` (any port), `host:port`, or
 * `*.domain` (its subdomains, any port). Compared without case.
 */
export function hostAllowed(allowed: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "");
  return allowed.some((entry) => {
    const match = /^(.*?)(?::(\d+))?$/.exec(entry.toLowerCase());
    const pattern = (match?.[1] ?? "").replace(/^\[|\]$/g, "");
    if (match?.[2] !== undefined && Number(match[2]) !== port) return false;
    if (pattern.startsWith("*.")) return name.endsWith(pattern.slice(1));
    return name === pattern;
  });
}

/** `host:port` split, with the default port of the scheme. */
function target(authority: string, defaultPort: number): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:/]+)(?::(\d+))?$/.exec(authority);
  if (match === null) return undefined;
  return {
    host: match[1]!.replace(/^\[|\]$/g, ""),
    port: match[2] === undefined ? defaultPort : Number(match[2]),
  };
}

function refuse(socket: Socket, status: string, why: string): void {
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nmcplex sandbox: ${why}\n`,
  );
}

/**
 * The proxy a sandboxed server with a host list reaches the network through: HTTP `CONNECT`
 * (https and anything tunnelled) and absolute-URI HTTP requests, to the listed hosts only.
 * It listens on a Unix socket bound into the sandbox, whose own network namespace has no
 * other way out. Returns the listening server (already bound when this returns).
 */
export function startFilterProxy(socketPath: string, allowed: readonly string[]): Server {
  const server = createServer((client) => {
    client.on("error", () => {});
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) {
        if (head.length > 64 * 1024)
          refuse(client, "431 Request Header Fields Too Large", "request head too large");
        return;
      }
      client.off("data", onData);
      client.pause();
      const line = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
      const [method = "", uri = ""] = line.split(" ");
      let to: { host: string; port: number } | undefined;
      let forward: Buffer | undefined;
      if (method === "CONNECT") {
        to = target(uri, 443);
      } else {
        let url: URL | undefined;
        try {
          url = new URL(uri);
        } catch {}
        if (url === undefined || url.protocol !== "http:") {
          refuse(
            client,
            "400 Bad Request",
            `send absolute http:// URLs or CONNECT, not ${JSON.stringify(line)}`,
          );
          return;
        }
        to = { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 80) };
        // One request per connection: a kept-alive client could send its next request, to
        // another host, down this one's pipe. `Connection: close` makes both ends let go.
        const end = head.indexOf("\r\n\r\n");
        const headers = head
          .subarray(head.indexOf("\r\n") + 2, end)
          .toString("latin1")
          .split("\r\n")
          .filter((header) => !/^(proxy-)?connection:/i.test(header));
        const request = [
          `${method} ${url.pathname}${url.search} HTTP/1.1`,
          ...headers,
          "connection: close",
          "",
          "",
        ];
        forward = Buffer.concat([Buffer.from(request.join("\r\n"), "latin1"), head.subarray(end + 4)]);
      }
      if (to === undefined)
        return refuse(client, "400 Bad Request", `cannot read the target of ${JSON.stringify(line)}`);
      if (!hostAllowed(allowed, to.host, to.port)) {
        return refuse(
          client,
          "403 Forbidden",
          `${to.host}:${to.port} is not in this server's sandbox network list`,
        );
      }
      const upstream = connect(to.port, to.host);
      upstream.on("error", () => {
        if (forward === undefined && !client.destroyed)
          refuse(client, "502 Bad Gateway", `could not reach ${to.host}:${to.port}`);
        else client.destroy();
      });
      upstream.once("connect", () => {
        if (forward === undefined) client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        else upstream.write(forward);
        client.pipe(upstream).pipe(client);
        client.resume();
      });
      client.on("close", () => upstream.destroy());
    };
    client.on("data", onData);
  });
  server.listen(socketPath);
  return server;
}
