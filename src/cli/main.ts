#!/usr/bin/env node
import module from "node:module";
import { EXIT, printError, setDebug, UsageError } from "./output.js";

const HELP = `mcplex — one runtime for every MCP server an agent uses

Usage:
  mcplex serve [--http | --ws | --stdio] [--transport stdio|http|websocket] [--host H] [--port P]
               [--token T ...] [--operator-token T ...] [--expose-tool GLOB ...] [--config F]
               [--profile P] [--no-prefix] [--log-calls] [--no-dashboard]
               [--dashboard-port P (with --stdio)] [--max-in-flight N] [--max-streams N]
               [--body-timeout T] [--max-sessions N] [--max-sessions-per-client N] [--ready-wait T]
               [--idle-timeout T] [--max-connections N] [--max-connections-per-client N]
               [--memory-budget SIZE]
               [--record DIR] [--simulate [--seed N] [--speed N]] [--tools all|search|code]
               [--rate-limit R[:BURST]] [--allow-origin ORIGIN ...] [--cluster redis://...]
               [--audit FILE|- (the audit trail: one JSON line per call; - for stderr)]
                                                      serve the whole catalog as one MCP server
                                                      (Streamable HTTP /mcp, WebSocket /ws, HTTP+SSE /sse,
                                                      the web dashboard /dashboard on 127.0.0.1:8420
                                                      by default)
  mcplex replay verify FILE --server NAME [--config F] [--json]
                                                      send a recording's requests to the live server and
                                                      report the answers that changed (exit 1 if any)
  mcplex list [--config F] [--profile P] [--json]     servers, their state and their tools
  mcplex trust SERVER [TOOL] [--config F] [--json]   approve the tool changes of a pinned server (pin:)
                                                      after reviewing them; written to the lock file
  mcplex call TOOL [JSON_ARGS] [--config F] [--json]  call one tool by its exposed name
  mcplex chat [-p PROMPT] [--model M] [--base-url U]  talk to an OpenAI-compatible LLM that uses the tools
              [--config F] [--profile P] [--tools all|search|code] [--json]
  mcplex config check [--config F] [--json]           validate a config without connecting
  mcplex config convert FILE                          print any supported config file as an mcplex.yaml
  mcplex doctor [--config F] [--port P] [--json]      start every server and check what mcplex needs,
                                                      saying what to fix
  mcplex secrets set NAME [VALUE] | list | rm NAME    manage the encrypted secret store
  mcplex search WORDS [--registry URL] [--limit N]    servers of the MCP Registry whose name matches
                [--json]
  mcplex add NAME [--name KEY] [--config F]           add a server from the MCP Registry to the config:
             [--env NAME=VALUE ...] [--registry URL]  version pinned, its inputs asked for, secret ones
                                                      in the secret store
  mcplex auth login NAME | logout NAME [--config F]   authorize mcplex with an OAuth server, in a browser
              [--no-browser]                          (only print the URL to open)
  mcplex connections list [--user SUB] [--json]      users' own connections to per-user servers
                     | revoke --user SUB (--server NAME | --all)
                     --url URL --token T              revoke one server's or all, on a running gateway
                                                      (--url, an operator's --token)
  mcplex workspace --root DIR [--allow-write]         run the built-in workspace server on stdio
              [--transport stdio|websocket] [--port P] [--host H] [--expose-tool GLOB ...]

Config: --config FILE, else mcplex.yaml|yml|json in this directory, else a read-only
workspace server on this directory. Claude Desktop / Cursor "mcpServers" and VS Code
"servers" files, and applications' "mcp: client: servers:" lists, "mcp_servers:" maps and
bare maps of servers by id are read as they are.

Exit codes: 0 ok, 1 the tool returned an error (or the server answered the call with a JSON-RPC
error; for replay verify, an answer changed), 2 usage, config, secret store or port error, 3 server (or LLM) unavailable.
Errors print one line and a hint; MCPLEX_DEBUG=1 or --debug adds the stack trace.`;

type Command = (args: string[]) => Promise<number>;

/**
 * Each command loads its own code, and only that: a client spawns `mcplex serve --stdio` for
 * every session, and start-up is felt each time (bench/startup-bench.ts).
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  add: async () => (await import("./commands/registry.js")).addCommand,
  auth: async () => (await import("./commands/auth.js")).authCommand,
  list: async () => (await import("./commands/list.js")).listCommand,
  replay: async () => (await import("./commands/replay.js")).replayCommand,
  call: async () => (await import("./commands/call.js")).callCommand,
  chat: async () => (await import("./commands/chat.js")).chatCommand,
  config: async () => (await import("./commands/config.js")).configCommand,
  connections: async () => (await import("./commands/connections.js")).connectionsCommand,
  doctor: async () => (await import("./commands/doctor.js")).doctorCommand,
  search: async () => (await import("./commands/registry.js")).searchCommand,
  secrets: async () => (await import("./commands/secrets.js")).secretsCommand,
  serve: async () => (await import("./commands/serve.js")).serveCommand,
  trust: async () => (await import("./commands/trust.js")).trustCommand,
  workspace: async () => (await import("./commands/workspace.js")).workspaceCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    console.log(HELP);
    return command === undefined ? EXIT.usage : EXIT.ok;
  }
  if (command === "--version" || command === "-v") {
    console.log("0.1.0");
    return EXIT.ok;
  }
  const run = COMMANDS[command];
  if (run === undefined) {
    throw new UsageError(`unknown command "${command}"; commands: ${Object.keys(COMMANDS).join(", ")}`);
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(HELP);
    return EXIT.ok;
  }
  try {
    return await (await run())(rest);
  } catch (error) {
    // node:util parseArgs: an unknown option, a missing value, a stray argument.
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_")) {
      throw new UsageError(`${command}: ${(error as Error).message}`);
    }
    throw error;
  }
}

/**
 * Node >= 22.1 keeps the code it compiled for each module on disk (NODE_COMPILE_CACHE, else
 * `node-compile-cache` in the OS temp dir; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so the
 * next start compiles less. On from here, it serves what loads after it: every command's code.
 * Node 20 has no such cache: nothing happens there.
 */
function enableCompileCache(): void {
  // A cache it cannot write (a read-only temp dir) comes back as a status, not a throw: the
  // start then costs what it costs without one.
  const { enableCompileCache: enable } = module as { enableCompileCache?: () => unknown };
  enable?.();
}

enableCompileCache();
// --debug anywhere (before or after the command) is for maintainers: stack traces on errors.
const argv = process.argv.slice(2);
if (argv.includes("--debug")) setDebug(true);
main(argv.filter((arg) => arg !== "--debug")).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = printError(error);
  },
);
