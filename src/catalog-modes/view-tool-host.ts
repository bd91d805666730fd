import type { CallToolResult } from "@modelcontextprotocol/client";
import type { CatalogTool } from "../catalog/types.js";
import type { CatalogView } from "./catalog-view.js";

/** What a {@link viewToolHost} reads and calls: the hub, or anything shaped like it. */
export interface CatalogHost {
  tools(profile?: string): readonly CatalogTool[];
  /** The host's skills (the agent loop's `ToolHost` members), passed on as they are. */
  skills?: (...args: never[]) => unknown;
  loadSkill?: (...args: never[]) => unknown;
  readSkillFile?: (...args: never[]) => unknown;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal; profile?: string },
  ): Promise<CallToolResult>;
}

/** The host's tools a model may see: none that only an MCP App calls. */
function modelTools(host: CatalogHost, profile: string | undefined): readonly CatalogTool[] {
  const tools = host.tools(profile);
  return tools.some((t) => t.appOnly === true) ? tools.filter((t) => t.appOnly !== true) : tools;
}

/** A view's tools and calls, as the agent loop's `ToolHost` takes them. */
interface ViewedHost {
  tools(profile?: string): ListedTool[];
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal; profile?: string },
  ): Promise<CallToolResult>;
}

/** A tool as an agent loop's `ToolHost` lists it. */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/**
 * `host` seen through `view`, as a tool host of the agent loop (`runAgent({ hub })`): the model
 * lists the view's tools (pins and meta-tools) and its meta-tools' inner calls go to the host
 * as direct calls, through the caller's profile. `mcplex chat --tools search|code` runs on it.
 *
 * @example
 * runAgent({ hub: viewToolHost(hub, new CatalogView({ mode: "code" }, viewEngines())), llm, messages });
 */
export function viewToolHost<H extends CatalogHost>(
  host: H,
  view: CatalogView,
): ViewedHost & Pick<H, "skills" | "loadSkill" | "readSkillFile"> {
  const viewed: ViewedHost = {
    tools(profile?: string): ListedTool[] {
      return view.listTools(modelTools(host, profile)).map((tool) => {
        const listed: ListedTool = {
          name: tool.name,
          inputSchema: tool.inputSchema as Record<string, unknown>,
        };
        if (tool.description !== undefined) listed.description = tool.description;
        return listed;
      });
    },
    callTool(
      name: string,
      args: Record<string, unknown>,
      options: { signal?: AbortSignal; profile?: string } = {},
    ): Promise<CallToolResult> {
      if (!view.handles(name)) return host.callTool(name, args, options);
      const { profile } = options;
      const signal = options.signal ?? new AbortController().signal;
      return view.call(name, args, {
        tools: modelTools(host, profile),
        signal,
        callTool: (tool, toolArgs, callSignal) =>
          host.callTool(
            tool,
            toolArgs,
            profile === undefined ? { signal: callSignal } : { signal: callSignal, profile },
          ),
      });
    },
  };
  // Skills are not the view's business: a model in search or code mode loads them as in `all`.
  const skills: Record<string, unknown> = {};
  for (const member of ["skills", "loadSkill", "readSkillFile"] as const) {
    const fn = host[member];
    if (typeof fn === "function") skills[member] = fn.bind(host);
  }
  return Object.assign(viewed, skills) as ViewedHost & Pick<H, "skills" | "loadSkill" | "readSkillFile">;
}
