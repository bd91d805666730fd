import { resolve } from "node:path";
import type { SERVER_DEFAULTS } from "../../config/read-server.js";
import type { McplexConfig } from "../../config/types.js";
import { serveWorkspaceStdio } from "../../workspace/stdio.js";
import { workspaceDefinition } from "../definitions/workspace.js";
import { EXIT, printError, UsageError } from "../output.js";
import { parseCommandArgs } from "../parse-command-args.js";
import { readExposeTools, unmatchedExposeTools } from "./expose-tool-flag.js";

/**
 * `mcplex workspace --root DIR [--allow-write] [--transport stdio|websocket] [--port P] [--host H]
 * [--expose-tool GLOB ...]`: the built-in workspace server. On plain stdio it is served directly;
 * over WebSocket, or with `--expose-tool`, through the gateway (one workspace server, names
 * unprefixed), which brings the WebSocket front and the tool filter of `mcplex serve`.
 */
export async function workspaceCommand(args: string[]): Promise<number> {
  const { values } = await parseCommandArgs(workspaceDefinition, args);
  const root = resolve(values.root ?? process.cwd());
  const allowWrite = values["allow-write"] === true;
  const transport = values.transport ?? "stdio";
  if (transport !== "stdio" && transport !== "websocket")
    throw new UsageError(`--transport must be stdio or websocket, not ${JSON.stringify(transport)}`);
  if (transport === "stdio" && (values.port !== undefined || values.host !== undefined))
    throw new UsageError("--port and --host are for --transport websocket");
  const exposeTools = await readExposeTools(values);
  if (transport === "stdio" && exposeTools.length === 0) return serveDirectly(root, allowWrite);

  // Through the gateway: its code, the config's and the HTTP guard's load only then, so that a
  // client that spawns the workspace server for each session waits for none of them.
  const [{ checkNonLoopbackBind, DEFAULT_PORT }, { SERVER_DEFAULTS }, { serve }] = await Promise.all([
    import("../../fronts/http-guard.js"),
    import("../../config/read-server.js"),
    import("../../assembly/serve.js"),
  ]);
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be 0-65535, not ${values.port}`);
  const host = values.host ?? "127.0.0.1";
  const refusal = checkNonLoopbackBind(host, 0);
  if (refusal !== undefined) throw new UsageError(refusal);
  const running = await serve({
    config: workspaceConfig(root, allowWrite, SERVER_DEFAULTS),
    transport: transport === "stdio" ? "stdio" : "http",
    ...(transport === "stdio" ? {} : { http: { host, port, dashboard: false } }),
    exposeTools,
    watch: false,
  });
  const stop = () => void running.close(transport === "stdio" ? 0 : undefined);
  if (exposeTools.length > 0) {
    await running.started;
    const problem = await unmatchedExposeTools(running.hub, exposeTools);
    if (problem !== undefined) {
      await running.close(0);
      // The stdio front may still hold stdin open; nothing is left to finish.
      process.exit(printError(problem));
    }
  }
  if (running.http !== undefined) {
    console.error(
      `mcplex workspace: ${root} (${allowWrite ? "read-write" : "read-only"})\n` +
        `  WebSocket        ${running.http.wsUrl}  (subprotocol mcp)\n` +
        `  Streamable HTTP  ${running.http.url}\nCtrl-C stops it.`,
    );
  }
  await new Promise<void>((done) => {
    const end = () => {
      stop();
      done();
    };
    process.once("SIGINT", end);
    process.once("SIGTERM", end);
    void running.stdio?.done.then(end);
  });
  await running.close(0);
  return EXIT.ok;
}

/** The workspace server on stdio, with no gateway in between. */
async function serveDirectly(root: string, allowWrite: boolean): Promise<number> {
  const handle = serveWorkspaceStdio({
    root,
    allowWrite,
    onerror: (error) => console.error(`mcplex workspace: ${error.message}`),
  });
  await new Promise<void>((done) => {
    const stop = () => void Promise.resolve(handle.close()).finally(done);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    process.stdin.once("end", stop);
  });
  return EXIT.ok;
}

/** One workspace server, its tools under their own names. */
function workspaceConfig(root: string, allowWrite: boolean, defaults: typeof SERVER_DEFAULTS): McplexConfig {
  return {
    source: "<workspace>",
    format: "default",
    servers: [
      {
        name: "workspace",
        transport: "workspace",
        root,
        allowWrite,
        rules: [],
        ...defaults,
        prefix: "",
        tools: {},
      },
    ],
    profiles: {},
    tokens: [],
    secrets: [],
  };
}
