import { defineCommand } from "../command-definition.js";
import { EXPOSE_TOOL_FLAG } from "./expose-tool-flag.js";

/** `mcplex workspace`. */
export const workspaceDefinition = defineCommand({
  name: "workspace",
  summary: "run the built-in workspace server (files of one directory) on stdio or WebSocket",
  usage:
    "mcplex workspace --root DIR [--allow-write] [--transport stdio|websocket] [--port P] [--host H] [--expose-tool GLOB ...]",
  flags: {
    root: {
      type: "string",
      short: "r",
      value: "DIR",
      description: "the directory it serves",
      defaultText: "this directory",
    },
    "allow-write": { type: "boolean", description: "let its tools write, not only read" },
    transport: {
      type: "string",
      short: "t",
      value: "stdio|websocket",
      description: "how to serve it",
      defaultText: "stdio",
    },
    host: {
      type: "string",
      value: "H",
      description: "with --transport websocket: the address to listen on",
      defaultText: "127.0.0.1",
    },
    port: {
      type: "string",
      value: "P",
      description: "with --transport websocket: the port to listen on",
      defaultText: "8420",
    },
    ...EXPOSE_TOOL_FLAG,
  },
  examples: [
    { command: "mcplex workspace --root ~/project", about: "serve ~/project read-only on stdio" },
    {
      command: "mcplex workspace --root . --allow-write --transport websocket --port 9000",
      about: "serve this directory read-write over WebSocket",
    },
  ],
});
