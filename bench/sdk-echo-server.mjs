#!/usr/bin/env node
// The echo tool served by the official SDK v2 McpServer over stdio (2025 handshake): the
// "direct SDK path" baseline, an echo server as most TypeScript MCP servers are written.
// bench/echo-server.mjs is the lean one, where the server costs next to nothing.
import { McpServer } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import * as z from "zod/v4";

const server = new McpServer({ name: "sdk-echo", version: "1" });
server.registerTool(
  "echo",
  { description: "Echoes its message", inputSchema: z.object({ message: z.string() }) },
  async ({ message }) => ({ content: [{ type: "text", text: message }] }),
);
await server.connect(new StdioServerTransport());
