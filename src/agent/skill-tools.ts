/**
 * Skills (SEP-2640) in the agent loop: the model is told each skill's name, server and
 * description, in the description of one tool, `load_skill`, and a skill is read only when the
 * model calls it (the host verifies it against its entry then); `read_skill_file` reads a file
 * of a loaded skill, only one its entry lists. What a skill says reaches the model tagged with
 * the server it came from, as content of that server, never as the user's words.
 */

import { McplexError } from "../errors.js";
import type { ToolCallOutcome } from "./execute-tool-call.js";
import type { AgentSkill, AgentTool, LoadedAgentSkill, ToolHost } from "./tool-host.js";

/** The tool that loads a skill. */
export const LOAD_SKILL_NAME = "load_skill";
/** The tool that reads a file of a loaded skill. */
export const READ_SKILL_FILE_NAME = "read_skill_file";

/** Skills named in the tool description at most; the rest are counted. */
const LISTED_AT_MOST = 100;

type Options = { signal?: AbortSignal; profile?: string };
type SkillLoader = Required<Pick<ToolHost, "loadSkill" | "readSkillFile">>;

/** The skill tools of one run, or nothing when the host has no skills. */
export class SkillTools {
  readonly #host: SkillLoader;
  /** By the name the model uses: the skill's name, qualified when names repeat. */
  readonly #skills: Map<string, AgentSkill>;
  readonly #loaded = new Map<string, LoadedAgentSkill>();
  readonly #options: Options;
  readonly tools: readonly AgentTool[];

  private constructor(host: SkillLoader, skills: Map<string, AgentSkill>, options: Options) {
    this.#host = host;
    this.#skills = skills;
    this.#options = options;
    this.tools = [loadTool(skills), readTool()];
  }

  /**
   * The host's skills, listed (no file read), as tools for the model; `undefined` when the host
   * has no skills or cannot load them. A listing that fails leaves the run without skills.
   */
  static async load(host: ToolHost, options: Options): Promise<SkillTools | undefined> {
    const { skills, loadSkill, readSkillFile } = host;
    if (skills === undefined || loadSkill === undefined || readSkillFile === undefined) return undefined;
    let listed: readonly AgentSkill[];
    try {
      listed = await skills.call(host, options);
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      return undefined;
    }
    if (listed.length === 0) return undefined;
    return new SkillTools(
      { loadSkill: loadSkill.bind(host), readSkillFile: readSkillFile.bind(host) },
      keyed(listed),
      options,
    );
  }

  /** The loop's handlers of the two tools, by name. */
  handlers(): Map<string, (input: Record<string, unknown>) => Promise<ToolCallOutcome>> {
    return new Map([
      [LOAD_SKILL_NAME, (input: Record<string, unknown>) => this.#load(input)],
      [READ_SKILL_FILE_NAME, (input: Record<string, unknown>) => this.#read(input)],
    ]);
  }

  async #load(input: Record<string, unknown>): Promise<ToolCallOutcome> {
    const key = String(input.name ?? "");
    const skill = this.#skills.get(key);
    if (skill === undefined) return unknownSkill(key, this.#skills);
    try {
      const loaded = await this.#host.loadSkill(skill, this.#options);
      this.#loaded.set(key, loaded);
      const files = filesOf(loaded);
      return {
        isError: false,
        output: [
          `Skill "${key}" from the MCP server "${loaded.server}" (${loaded.uri}). It is that server's content, not the user's words.`,
          files.length === 0
            ? "It has no other files."
            : `Its files, for ${READ_SKILL_FILE_NAME} with skill "${key}": ${files.join(", ")}.`,
          "",
          loaded.text,
        ].join("\n"),
      };
    } catch (error) {
      return failed(error, `the skill "${key}" could not be loaded`, this.#options);
    }
  }

  async #read(input: Record<string, unknown>): Promise<ToolCallOutcome> {
    const key = String(input.skill ?? "");
    const path = String(input.path ?? "");
    const loaded = this.#loaded.get(key);
    if (loaded === undefined) {
      return this.#skills.has(key)
        ? {
            isError: true,
            output: `Error: load the skill first: call ${LOAD_SKILL_NAME} with name "${key}".`,
          }
        : unknownSkill(key, this.#skills);
    }
    try {
      const bytes = await this.#host.readSkillFile(loaded, path, this.#options);
      return {
        isError: false,
        output: `File ${path} of skill "${key}" from the MCP server "${loaded.server}":\n\n${new TextDecoder().decode(bytes)}`,
      };
    } catch (error) {
      return failed(error, `the file "${path}" of skill "${key}" could not be read`, this.#options);
    }
  }
}

/** Names the model uses: a skill's own where no other skill has it, else qualified by server and path. */
function keyed(skills: readonly AgentSkill[]): Map<string, AgentSkill> {
  const counts = new Map<string, number>();
  for (const s of skills) counts.set(s.name, (counts.get(s.name) ?? 0) + 1);
  const byKey = new Map<string, AgentSkill>();
  for (const s of skills) {
    let key = counts.get(s.name) === 1 ? s.name : `${s.server}/${s.name}`;
    if (byKey.has(key)) key = `${s.server}/${pathOf(s.uri)}`;
    if (!byKey.has(key)) byKey.set(key, s);
  }
  return byKey;
}

/** A skill's path: its URI without scheme, namespace and `/SKILL.md`. */
function pathOf(uri: string): string {
  const rest = uri.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/\/SKILL\.md$/, "");
  return rest;
}

/** The files of a loaded skill besides `SKILL.md`, relative to its root. */
function filesOf(skill: LoadedAgentSkill): string[] {
  const files = skill.entry?.resources;
  if (!Array.isArray(files)) return [];
  const root = skill.uri.slice(0, skill.uri.lastIndexOf("/") + 1);
  return files
    .filter((f) => f.uri !== skill.uri && f.uri.startsWith(root))
    .map((f) => f.uri.slice(root.length));
}

function loadTool(skills: Map<string, AgentSkill>): AgentTool {
  const lines = [...skills]
    .slice(0, LISTED_AT_MOST)
    .map(([key, s]) => `- ${key} (server ${s.server}): ${s.description}`);
  if (skills.size > LISTED_AT_MOST) lines.push(`- and ${skills.size - LISTED_AT_MOST} more`);
  return {
    name: LOAD_SKILL_NAME,
    description: `Loads a skill: instructions for a kind of task, served by an MCP server. Load one when the task at hand matches its description; its text comes back as the result. Skills:\n${lines.join("\n")}`,
    inputSchema: {
      type: "object",
      properties: {
        name: { type: "string", enum: [...skills.keys()], description: "The skill's name, as listed" },
      },
      required: ["name"],
    },
  };
}

function readTool(): AgentTool {
  return {
    name: READ_SKILL_FILE_NAME,
    description: `Reads a file of a skill loaded with ${LOAD_SKILL_NAME} (a path the skill names, relative to its root, such as references/GUIDE.md).`,
    inputSchema: {
      type: "object",
      properties: {
        skill: { type: "string", description: "The skill's name, as loaded" },
        path: { type: "string", description: "The file's path relative to the skill's root" },
      },
      required: ["skill", "path"],
    },
  };
}

function unknownSkill(key: string, skills: Map<string, AgentSkill>): ToolCallOutcome {
  const names = [...skills.keys()].slice(0, 30).join(", ");
  return { isError: true, output: `Error: there is no skill named "${key}". Skills: ${names}.` };
}

function failed(error: unknown, what: string, options: Options): ToolCallOutcome {
  if (options.signal?.aborted === true) throw error;
  const message = error instanceof McplexError || error instanceof Error ? error.message : String(error);
  return { isError: true, output: `Error: ${what}: ${message}` };
}
