/**
 * The fixture MCP server the official conformance server suite expects (every tool, resource
 * and prompt of its scenarios), built on SDK v2. Imported, it gives the factory and the HTTP
 * starter; run, it serves:
 *
 *   tsx test/conformance/everything-server.ts --stdio                 # 2026-07-28 + 2025 (serveStdio)
 *   tsx test/conformance/everything-server.ts --stdio --legacy-only   # 2025 only (StdioServerTransport)
 *   tsx test/conformance/everything-server.ts --http 0                # 2026 (createMcpHandler) + 2025 sessions
 *   tsx test/conformance/everything-server.ts --http 0 --legacy-only  # 2025 sessions only
 *
 * In HTTP mode it prints `listening on http://127.0.0.1:<port>/mcp` to stderr when ready.
 */
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import { buildEverythingServer } from "./everything/build-everything-server.js";
import { startEverythingHttp } from "./everything/serve-http.js";

export {
  buildEverythingServer,
  type Era,
  type EverythingServerOptions,
} from "./everything/build-everything-server.js";
export {
  type EverythingHttp,
  type EverythingHttpOptions,
  startEverythingHttp,
} from "./everything/serve-http.js";

const USAGE = "usage: everything-server (--stdio | --http <port>) [--legacy-only]";

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      stdio: { type: "boolean" },
      http: { type: "string" },
      "legacy-only": { type: "boolean" },
    },
    strict: true,
  });
  const legacyOnly = values["legacy-only"] === true;
  if (values.stdio === true && values.http === undefined) {
    if (legacyOnly) {
      const server = buildEverythingServer({ era: "legacy" });
      await server.connect(new StdioServerTransport());
      process.stdin.once("end", () => void server.close());
      return;
    }
    const handle = serveStdio(({ era }) => buildEverythingServer({ era }), {
      onerror: (error) => process.stderr.write(`everything-server: ${error.message}\n`),
    });
    process.stdin.once("end", () => void handle.close());
    return;
  }
  const port = values.http === undefined ? Number.NaN : Number(values.http);
  if (values.stdio === true || !Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const http = await startEverythingHttp({
    port,
    legacyOnly,
    onError: (error) => {
      if (process.env.EVERYTHING_SERVER_DEBUG) process.stderr.write(`everything-server: ${String(error)}\n`);
    },
  });
  const stop = () => void http.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  process.stderr.write(`listening on ${http.url}\n`);
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(
      `everything-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
