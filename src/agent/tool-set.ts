/**
 * The tools one run offers the model: the whole catalog when it fits the provider's
 * limit, else a `search_tools` entry point and whatever the model has found with it.
 */

import { readSearchArguments, SEARCH_TOOLS_NAME, searchToolsTool } from "../catalog/search-tools-tool.js";
import { McplexError } from "../errors.js";
import type { AgentEvent } from "./agent-events.js";
import type { ChatTool } from "./chat-types.js";
import type { ExecuteToolCallContext, ToolCallOutcome } from "./execute-tool-call.js";
import { type SchemaProfile, toChatTools } from "./schema-sanitizer.js";
import { SkillTools } from "./skill-tools.js";
import type { AgentTool, ToolHost } from "./tool-host.js";
import { createToolSearch } from "./tool-search.js";

/** How a {@link ToolSet} is chosen. */
export interface ToolSetOptions {
  profile?: string | undefined;
  schemaProfile: SchemaProfile;
  toolMode: "auto" | "all" | "search";
  maxTools: number;
}

/** The tools of one run, with search-then-call narrowing when there are too many. */
export class ToolSet {
  /** Notices to report before the first step. */
  readonly notices: AgentEvent[] = [];
  readonly #all: readonly AgentTool[];
  readonly #byName: Map<string, AgentTool>;
  readonly #options: ToolSetOptions;
  /** In search mode, the tools found so far (in order found); undefined when all tools are offered. */
  readonly #found: AgentTool[] | undefined;
  /** `load_skill` and `read_skill_file`, when the host has skills. */
  readonly #skills: SkillTools | undefined;

  private constructor(
    all: readonly AgentTool[],
    options: ToolSetOptions,
    search: boolean,
    skills: SkillTools | undefined,
  ) {
    this.#all = all;
    this.#byName = new Map(all.map((tool) => [tool.name, tool]));
    this.#options = options;
    this.#found = search ? [] : undefined;
    this.#skills = skills;
  }

  /**
   * Lists the host's tools (less those only an MCP App calls) and its skills, and decides
   * between offering all tools and search-then-call. Skills are offered through `load_skill`
   * either way; none is read before the model asks.
   */
  static async load(hub: ToolHost, options: ToolSetOptions & { signal?: AbortSignal }): Promise<ToolSet> {
    const listed = (await hub.tools(options.profile)).filter((tool) => tool.appOnly !== true);
    const skills = await SkillTools.load(hub, {
      ...(options.profile === undefined ? {} : { profile: options.profile }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    // The skill tools take two of the provider's places.
    const over = listed.length > options.maxTools - (skills === undefined ? 0 : 2);
    if (over && options.toolMode === "all") {
      throw new McplexError(
        "INVALID_ARGUMENT",
        `${listed.length} tools are more than the provider accepts (${options.maxTools})`,
        { hint: "Narrow the tools with a profile, or use toolMode 'search' (search-then-call)." },
      );
    }
    const search = options.toolMode === "search" || over;
    const set = new ToolSet(listed, options, search, skills);
    if (over) {
      set.notices.push({
        type: "notice",
        code: "too-many-tools",
        message:
          `${listed.length} tools are more than the provider accepts (${options.maxTools}); ` +
          `the model first sees one "${SEARCH_TOOLS_NAME}" tool. Use a profile to narrow the catalog instead.`,
      });
    }
    return set;
  }

  #cache: { size: number; tools: ChatTool[] } | undefined;

  /** The tools of the next request, sanitised for the provider (recomputed only when the set grew). */
  chatTools(): ChatTool[] {
    const size = this.#found?.length ?? -1;
    if (this.#cache?.size !== size) {
      const offered = this.#found === undefined ? this.#all : [searchToolsTool, ...this.#found];
      const withSkills = this.#skills === undefined ? offered : [...offered, ...this.#skills.tools];
      this.#cache = { size, tools: toChatTools(withSkills, this.#options.schemaProfile) };
    }
    return this.#cache.tools;
  }

  /** What {@link executeToolCall} needs to run this step's calls. */
  executionContext(
    hub: ToolHost,
    profile: string | undefined,
    signal: AbortSignal | undefined,
  ): ExecuteToolCallContext {
    const names = this.#all.map((tool) => tool.name);
    const context: ExecuteToolCallContext = { hub, known: new Set(names), suggestions: names };
    const local = new Map<
      string,
      (input: Record<string, unknown>) => ToolCallOutcome | Promise<ToolCallOutcome>
    >(this.#skills?.handlers() ?? []);
    if (this.#found !== undefined) {
      local.set(SEARCH_TOOLS_NAME, (input) => this.#search(input));
      context.suggestions = [SEARCH_TOOLS_NAME, ...this.#found.map((tool) => tool.name)];
    }
    if (local.size > 0) context.local = local;
    if (profile !== undefined) context.profile = profile;
    if (signal) context.signal = signal;
    return context;
  }

  #searchIndex: ReturnType<typeof createToolSearch> | undefined;

  #search(input: Record<string, unknown>): ToolCallOutcome {
    const found = this.#found!;
    const search = readSearchArguments(input);
    if ("error" in search) return { isError: true, output: search.error };
    this.#searchIndex ??= createToolSearch(this.#all);
    const { query } = search;
    const hits = this.#searchIndex(search);
    for (const hit of hits) {
      if (!found.includes(hit) && found.length < this.#options.maxTools - 1) found.push(hit);
    }
    if (hits.length === 0)
      return { isError: false, output: `No tools match "${query}". Try other keywords.` };
    const list = hits.map((tool) => ({ name: tool.name, description: tool.description ?? "" }));
    return {
      isError: false,
      output: `These tools can now be called: ${JSON.stringify(list)}`,
    };
  }

  /** The catalog entry for a name, if any. */
  get(name: string): AgentTool | undefined {
    return this.#byName.get(name);
  }
}
