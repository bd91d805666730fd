/**
 * The seam between the agent loop and whatever provides tools (the hub, or any adapter).
 */
import type { CallToolResult } from "@modelcontextprotocol/client";

/** A tool as the agent sees it: an LLM-safe name, a description and a JSON Schema for its input. */
export interface AgentTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** A tool only an MCP App calls (`_meta.ui.visibility` without `"model"`): never offered to the model. */
  appOnly?: boolean;
}

/** A skill a host offers (SEP-2640), as its listing describes it: nothing of it is read yet. */
export interface AgentSkill {
  /** The server it comes from, told to the model with its content. */
  server: string;
  name: string;
  description: string;
  /** Its `SKILL.md`. */
  uri: string;
  /** Its entry's files (`resources`), when the listing gave them. */
  entry?: { resources: ReadonlyArray<{ uri: string }> | "dynamic" };
}

/** A skill whose `SKILL.md` the host read and verified. */
export interface LoadedAgentSkill extends AgentSkill {
  text: string;
}

/**
 * Where the agent loop lists and calls tools. `Hub` implements it as it is; so can any adapter.
 *
 * @example
 * const host: ToolHost = { tools: () => tools, callTool: (name, args) => client.callTool({ name, arguments: args }) };
 */
export interface ToolHost {
  /** Tools visible to the agent (LLM-safe names matching ^[A-Za-z0-9_-]{1,64}$). */
  tools(profile?: string): readonly AgentTool[] | Promise<readonly AgentTool[]>;
  /**
   * The skills the model may load, listed only (optional: a host without skills leaves the
   * three skill members out). `Hub` lists those of every server that declares the extension.
   */
  skills?(options?: { signal?: AbortSignal; profile?: string }): Promise<readonly AgentSkill[]>;
  /** Reads and verifies a skill's `SKILL.md`, when the model asks for it. */
  loadSkill?(
    skill: AgentSkill,
    options?: { signal?: AbortSignal; profile?: string },
  ): Promise<LoadedAgentSkill>;
  /** Reads and verifies a file a loaded skill lists (a path relative to its root). */
  readSkillFile?(
    skill: LoadedAgentSkill,
    path: string,
    options?: { signal?: AbortSignal; profile?: string },
  ): Promise<Uint8Array>;
  /** Calls a tool by exposed name. Resolves with the MCP CallToolResult (isError for tool errors); rejects for unknown tools / unavailable servers. */
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal; profile?: string },
  ): Promise<CallToolResult>;
}

/**
 * `host` with the tools `hidden` says no to left out of its list (a policy that denies them to
 * this caller whatever the arguments): the model is not offered what it may not call. Calls and
 * skills go to `host` as they are.
 */
export function withoutHiddenTools(host: ToolHost, hidden: (tool: AgentTool) => boolean): ToolHost {
  const filtered: ToolHost = {
    tools: async (profile) => (await host.tools(profile)).filter((tool) => !hidden(tool)),
    callTool: (name, args, options) => host.callTool(name, args, options),
  };
  if (host.skills !== undefined) filtered.skills = (options) => host.skills!(options);
  if (host.loadSkill !== undefined) filtered.loadSkill = (skill, options) => host.loadSkill!(skill, options);
  if (host.readSkillFile !== undefined)
    filtered.readSkillFile = (skill, path, options) => host.readSkillFile!(skill, path, options);
  return filtered;
}
