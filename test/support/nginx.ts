/**
 * A real nginx (Debian's, installed by scripts/ensure-nginx.mjs) for tests: a load balancer on
 * a free loopback port, in a temp directory, in front of the given upstreams, configured as
 * docs/guide/replicas.md tells operators to (streaming responses unbuffered).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForListener } from "./free-port.js";

/** Where the tests find nginx. */
export const NGINX = process.env.NGINX_PATH ?? "/usr/sbin/nginx";

/** Options of {@link startNginx}. */
export interface NginxOptions {
  /** `host:port` of each replica. */
  upstreams: string[];
  /** Balance on `Mcp-Session-Id` (`hash ... consistent`) instead of round-robin. */
  sticky?: boolean;
}

/** A running nginx. */
export interface NginxProcess {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** The master process's id (its workers are its children). */
  readonly pid: number;
  /** Everything nginx wrote to its error log so far. */
  errors(): string;
  /** Stops it and removes its directory; safe to call twice. */
  stop(): Promise<void>;
}

/** The nginx.conf of a load balancer on `port` in `dir`. */
export function nginxConfig(dir: string, port: number, options: NginxOptions): string {
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  return `${root ? "user root;\n" : ""}worker_processes 1;
daemon off;
pid ${join(dir, "nginx.pid")};
error_log ${join(dir, "error.log")} warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${join(dir, "body")};
  proxy_temp_path ${join(dir, "proxy")};
  fastcgi_temp_path ${join(dir, "fastcgi")};
  uwsgi_temp_path ${join(dir, "uwsgi")};
  scgi_temp_path ${join(dir, "scgi")};
  upstream mcplex {
${options.sticky === true ? "    hash $http_mcp_session_id consistent;\n" : ""}${options.upstreams.map((u) => `    server ${u} max_fails=1 fail_timeout=2s;`).join("\n")}
    keepalive 128;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://mcplex;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 1h;
      proxy_next_upstream error timeout;
    }
  }
}
`;
}

/** Starts nginx on a free 127.0.0.1 port; resolves when it accepts connections. */
export async function startNginx(options: NginxOptions): Promise<NginxProcess> {
  const dir = mkdtempSync(join(tmpdir(), "mcplex-nginx-"));
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    writeFileSync(join(dir, "nginx.conf"), nginxConfig(dir, port, options));
    const child = spawn(NGINX, ["-e", join(dir, "error.log"), "-p", dir, "-c", join(dir, "nginx.conf")], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const readLog = () => {
      try {
        return readFileSync(join(dir, "error.log"), "utf8");
      } catch {
        return "";
      }
    };
    try {
      await waitForListener(port, () =>
        child.exitCode !== null || child.signalCode !== null
          ? `nginx exited before serving:\n${stderr}${readLog()}`
          : undefined,
      );
    } catch (error) {
      child.kill("SIGKILL");
      if (attempt >= 4 || !/Address already in use/.test(String(error))) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
      }
      continue;
    }
    return handle(child, dir, port, () => stderr + readLog());
  }
}

function handle(child: ChildProcess, dir: string, port: number, errors: () => string): NginxProcess {
  let stopping: Promise<void> | undefined;
  return {
    origin: `http://127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid!,
    errors,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<void>((r) => child.once("exit", () => r()));
          // SIGTERM: fast shutdown, the master takes its workers with it.
          child.kill("SIGTERM");
          await exited;
        }
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
