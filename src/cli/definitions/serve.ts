import { defineCommand } from "../command-definition.js";
import { CONFIG_FLAG } from "./common-flags.js";
import { EXPOSE_TOOL_FLAG } from "./expose-tool-flag.js";
import { LIMIT_FLAGS } from "./limit-flags.js";

/** `mcplex serve`. */
export const serveDefinition = defineCommand({
  name: "serve",
  summary: "serve the whole catalog as one MCP server",
  usage:
    "mcplex serve [--http | --ws | --stdio] [--transport stdio|http|websocket] [--host H] [--port P] [--config F] [flags]",
  details:
    "Over HTTP (the default): Streamable HTTP at /mcp, WebSocket at /ws, HTTP+SSE at /sse and the web " +
    "dashboard at /dashboard, on 127.0.0.1:8420. Over stdio: for clients that spawn their servers.",
  flags: {
    ...CONFIG_FLAG,
    stdio: { type: "boolean", description: "serve over stdio, for a client that spawns mcplex" },
    http: { type: "boolean", description: "serve over HTTP (the default): /mcp, /ws, /sse, /dashboard" },
    ws: { type: "boolean", description: "the same as --http (the WebSocket front is at /ws)" },
    transport: {
      type: "string",
      short: "t",
      value: "stdio|http|websocket",
      description: "how to serve; http and websocket are one front (/mcp and /ws)",
      defaultText: "http",
    },
    ...EXPOSE_TOOL_FLAG,
    host: {
      type: "string",
      value: "H",
      description: "the address to listen on; another than loopback needs a token",
      defaultText: "127.0.0.1",
    },
    port: {
      type: "string",
      value: "P",
      description: "the port to listen on (0: any free one)",
      defaultText: "8420",
    },
    token: {
      type: "string",
      multiple: true,
      value: "T",
      description: "a bearer token clients must send, besides the config's tokens",
    },
    "operator-token": {
      type: "string",
      multiple: true,
      value: "T",
      description: "a token that may also read /metrics and /readyz",
    },
    profile: { type: "string", value: "P", description: "serve the tools of this profile of the config" },
    "no-prefix": { type: "boolean", description: "expose tools under their own names, without server__" },
    "log-calls": { type: "boolean", description: "print one JSON line per call on stderr" },
    "no-dashboard": { type: "boolean", description: "do not serve the web dashboard" },
    "dashboard-port": {
      type: "string",
      value: "P",
      description: "with --stdio: also serve the dashboard over HTTP on this port",
    },
    "ready-wait": {
      type: "string",
      value: "T",
      description: "how long a first request waits for servers still starting (a duration, or 0)",
      defaultText: "1s",
    },
    record: { type: "string", value: "DIR", description: "record every server's traffic into DIR" },
    simulate: {
      type: "boolean",
      description: "answer from recordings (or cached tool lists) instead of starting the servers",
    },
    seed: {
      type: "string",
      value: "N",
      description: "with --simulate: the seed of simulated answers",
      defaultText: "1",
    },
    speed: {
      type: "string",
      value: "N",
      description: "with --simulate: how fast recorded delays replay (0: at once)",
      defaultText: "1",
    },
    tools: {
      type: "string",
      value: "all|search|code",
      description: "how clients see the tools: all of them, a search tool, or code mode",
      defaultText: "all",
    },
    cluster: {
      type: "string",
      value: "redis://...",
      description: "run as a replica of a cluster sharing state in this Redis (HTTP only)",
    },
    "rate-limit": {
      type: "string",
      value: "R[:BURST]",
      description: "requests per second per token (or client address), with an optional burst",
    },
    "allow-origin": {
      type: "string",
      multiple: true,
      value: "ORIGIN",
      description: "a browser origin allowed to call the gateway",
    },
    audit: {
      type: "string",
      value: "FILE|-",
      description: "write the audit trail (one JSON line per call) to FILE, or - for stderr",
    },
    ...LIMIT_FLAGS,
  },
  examples: [
    { command: "mcplex serve", about: "serve ./mcplex.yaml over HTTP on 127.0.0.1:8420" },
    { command: "mcplex serve --stdio --config ~/mcplex.yaml", about: "serve to a client that spawns it" },
    {
      command: "mcplex serve --host 0.0.0.0 --port 9000 --token $MCPLEX_TOKEN",
      about: "serve on every interface, to clients that send the token",
    },
  ],
});
