import type { CallToolResult, ReadResourceResult, Resource, Tool } from "@modelcontextprotocol/client";
import { readSearchArguments } from "../catalog/search-tools-tool.js";
import { compileToolFilter, type NameMatcher } from "../catalog/tool-filter.js";
import { listedTool } from "../catalog/tool-overrides.js";
import type { CatalogTool } from "../catalog/types.js";
import type { CatalogMode, ModeSettings } from "./catalog-mode.js";
import { isMetaTool, META_TOOL, metaTools } from "./meta-tools.js";

/** One tool found by a search. */
export interface ToolHit {
  name: string;
  server: string;
  /** The first sentence of the description, short. */
  description: string;
}

/** Searches tools (see `src/catalog/tool-index.ts` for the index the gateway uses). */
export type ToolSearch = (
  tools: readonly CatalogTool[],
  query: string,
  options: { server?: string; limit: number },
) => ToolHit[] | Promise<ToolHit[]>;

/** Runs a `run_code` script over the caller's tools (see `src/code-mode/`). */
export type CodeRunner = (request: {
  code: string;
  tools: readonly CatalogTool[];
  callTool: (name: string, args: Record<string, unknown>, signal: AbortSignal) => Promise<CallToolResult>;
  signal: AbortSignal;
  /** Who runs it (see {@link ViewCall.caller}): each caller has its own queue for the sandbox. */
  caller?: string;
}) => Promise<CallToolResult>;

/** TypeScript declarations of tools as `run_code` scripts call them. */
export type DeclarationWriter = (tools: readonly CatalogTool[]) => string | Promise<string>;

/** What a view needs besides the caller's tools: search, and for `code` mode the sandbox. */
export interface ViewEngines {
  search: ToolSearch;
  runCode?: CodeRunner;
  declarations?: DeclarationWriter;
}

/** One caller's request to a meta-tool: what it may see, and how its inner calls are made. */
export interface ViewCall {
  /** The tools the caller may use (its profile's view of the catalog). */
  tools: readonly CatalogTool[];
  /** Calls one of {@link tools} by exposed name the way a direct call would go (same layers). */
  callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
  signal: AbortSignal;
  /**
   * Who is calling (a token's key, or the client's address without tokens): `run_code`
   * scripts of one caller share its queue and share of the sandbox workers.
   */
  caller?: string;
  /**
   * Tools of `available:` servers that do not run now but that the caller may start
   * (`connect_server`): `search_tools` finds them too, in a part of its answer of their own.
   */
  available?: () => Promise<readonly CatalogTool[]>;
  /**
   * Whether a name not among {@link tools} is a tool all the same once the servers still
   * starting that may own it have listed theirs (the hub's `findTool`): `call_tool` of a tool
   * whose server is starting waits for it, as a direct call does, instead of failing as unknown.
   */
  findTool?: (name: string, signal: AbortSignal) => Promise<boolean>;
}

/** Where a code-mode view serves the declarations of the caller's tools. */
export const DECLARATIONS_URI = "mcplex://code-mode/tools.d.ts";

/** Most hits of servers not running that `search_tools` adds below the others. */
const AVAILABLE_HITS = 3;

/**
 * A catalog seen through a {@link CatalogMode}: the tools a client lists (pinned tools and the
 * mode's meta-tools), and the meta-tools' answers. A view of the catalog, not a second catalog:
 * whatever a meta-tool finds or calls is looked up in the caller's own tools at call time, and
 * inner calls go the way a direct call goes.
 */
export class CatalogView {
  readonly mode: CatalogMode;
  readonly #pinned: NameMatcher;
  readonly #engines: ViewEngines;

  constructor(settings: ModeSettings, engines: ViewEngines) {
    this.mode = settings.mode;
    this.#pinned = pinMatcher(settings.pin);
    this.#engines = engines;
  }

  /** What `tools/list` shows: the pinned tools as themselves, then the meta-tools. */
  listTools(tools: readonly CatalogTool[]): Tool[] {
    const listed: Tool[] = [];
    for (const t of tools) {
      if (this.mode === "all" || this.#pinned(t.name)) listed.push(listedTool(t));
    }
    listed.push(...metaTools(this.mode));
    return listed;
  }

  /**
   * The resources the view adds to the catalog's: in `code` mode, the TypeScript declarations
   * of the caller's tools ({@link DECLARATIONS_URI}), for clients that read them up front.
   */
  resources(): Resource[] {
    if (this.mode !== "code" || this.#engines.declarations === undefined) return [];
    return [
      {
        uri: DECLARATIONS_URI,
        name: "tools.d.ts",
        title: "Tool declarations for run_code",
        description: "TypeScript declarations of every tool a run_code script can call",
        mimeType: "text/x.typescript",
      },
    ];
  }

  /** Reads one of {@link resources}; `undefined` for any other URI. */
  async readResource(uri: string, tools: readonly CatalogTool[]): Promise<ReadResourceResult | undefined> {
    if (uri !== DECLARATIONS_URI || this.resources().length === 0) return undefined;
    const text = await this.#engines.declarations!(tools);
    return { contents: [{ uri, mimeType: "text/x.typescript", text }] };
  }

  /** Whether `name` is a meta-tool this view answers itself. */
  handles(name: string): boolean {
    return isMetaTool(this.mode, name);
  }

  /** Answers a call of one of the view's meta-tools; failures the model can mend are `isError` results. */
  async call(name: string, args: Record<string, unknown>, call: ViewCall): Promise<CallToolResult> {
    switch (name) {
      case META_TOOL.search:
        return this.#search(args, call);
      case META_TOOL.describe:
        return this.#describe(args, call);
      case META_TOOL.call:
        return this.#callTool(args, call);
      case META_TOOL.runCode:
        return this.#runCode(args, call);
      default:
        return toolError(`${name} is not a tool of the ${this.mode} view`);
    }
  }

  async #search(args: Record<string, unknown>, call: ViewCall): Promise<CallToolResult> {
    const read = readSearchArguments(args);
    if ("error" in read) return toolError(read.error);
    const { query, server } = read;
    const options = { limit: read.limit, ...(server === undefined ? {} : { server }) };
    const hits = await this.#engines.search(call.tools, query, options);
    const available = call.available === undefined ? [] : await call.available();
    const offline =
      available.length === 0
        ? []
        : await this.#engines.search(available, query, {
            ...options,
            limit: Math.min(options.limit, AVAILABLE_HITS),
          });
    const lines = hits.map((h) => `- ${h.name} (${h.server})${h.description ? `: ${h.description}` : ""}`);
    if (offline.length > 0) {
      lines.push("Tools of servers not running (call connect_server with the server first):");
      for (const h of offline)
        lines.push(`- ${h.name} (${h.server})${h.description ? `: ${h.description}` : ""}`);
    }
    if (lines.length === 0) {
      const servers = [...new Set(call.tools.map((t) => t.server))];
      return text(
        `No tool matches "${query}"${server === undefined ? "" : ` on server ${server}`}. ` +
          `Try other words${servers.length > 0 ? `; servers: ${servers.join(", ")}` : ""}.`,
      );
    }
    const next = this.mode === "code" ? "describe_tools, then run_code" : "describe_tools, then call_tool";
    return text(`${lines.join("\n")}\nNext: ${next}.`);
  }

  async #describe(args: Record<string, unknown>, call: ViewCall): Promise<CallToolResult> {
    const names = args.names;
    if (!Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== "string"))
      return toolError("describe_tools needs `names`: a list of tool names from search_tools");
    const byName = new Map(call.tools.map((t) => [t.name, t]));
    const found: CatalogTool[] = [];
    const unknown: string[] = [];
    for (const name of new Set(names as string[])) {
      const tool = byName.get(name);
      if (tool === undefined) unknown.push(name);
      else found.push(tool);
    }
    if (found.length === 0) return toolError(unknownTools(unknown));
    let body: string;
    if (this.mode === "code" && this.#engines.declarations !== undefined) {
      body = await this.#engines.declarations(found);
    } else {
      body = JSON.stringify(found.map(describeTool));
    }
    return text(unknown.length === 0 ? body : `${body}\n${unknownTools(unknown)}`);
  }

  async #callTool(args: Record<string, unknown>, call: ViewCall): Promise<CallToolResult> {
    const name = args.name;
    if (typeof name !== "string" || name === "")
      return toolError("call_tool needs `name`: a tool name from search_tools");
    const inner = args.arguments ?? {};
    if (typeof inner !== "object" || inner === null || Array.isArray(inner))
      return toolError(`call_tool: \`arguments\` of ${name} must be an object`);
    if (isMetaTool(this.mode, name)) return toolError(`call_tool calls catalog tools; call ${name} directly`);
    if (!call.tools.some((t) => t.name === name) && !(await call.findTool?.(name, call.signal)))
      return toolError(unknownTools([name]));
    return call.callTool(name, inner as Record<string, unknown>, call.signal);
  }

  async #runCode(args: Record<string, unknown>, call: ViewCall): Promise<CallToolResult> {
    const code = args.code;
    if (typeof code !== "string" || code.trim() === "")
      return toolError("run_code needs `code`: a script that calls `await tools.SERVER.TOOL({...})`");
    const runCode = this.#engines.runCode;
    if (runCode === undefined) return toolError("run_code is not available in this gateway");
    return runCode({
      code,
      tools: call.tools,
      callTool: call.callTool,
      signal: call.signal,
      ...(call.caller === undefined ? {} : { caller: call.caller }),
    });
  }
}

/** What `describe_tools` says of one tool outside code mode. */
/**
 * A compiled `pin` list: `true` for an exposed name that stays visible as itself. Here, not with
 * the modes (catalog-mode.ts), so that reading a mode (`mcplex serve --tools`, before the servers
 * spawn) does not load the glob code.
 */
function pinMatcher(pin: readonly string[] | undefined): NameMatcher {
  if (pin === undefined || pin.length === 0) return () => false;
  return compileToolFilter({ allow: [...pin] });
}

function describeTool(tool: CatalogTool): Record<string, unknown> {
  const described: Record<string, unknown> = { name: tool.name, server: tool.server };
  if (tool.title !== undefined) described.title = tool.title;
  if (tool.description !== undefined) described.description = tool.description;
  described.inputSchema = tool.inputSchema;
  if (tool.outputSchema !== undefined) described.outputSchema = tool.outputSchema;
  if (tool.annotations !== undefined) described.annotations = tool.annotations;
  return described;
}

function unknownTools(names: readonly string[]): string {
  return `No tool named ${names.join(", ")} is available to you; use search_tools to find tool names.`;
}

function text(value: string): CallToolResult {
  return { content: [{ type: "text", text: value }] };
}

function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: message }] };
}
