import { McplexError } from "../../errors.js";
import type { Hub } from "../../hub/hub.js";
import { UsageError } from "../output.js";

/**
 * The `--expose-tool` globs, each checked to be a usable glob. The glob code loads only when
 * there are some: `serve` reads this before it starts its servers.
 */
export async function readExposeTools(values: { "expose-tool"?: string[] }): Promise<string[]> {
  const globs = values["expose-tool"] ?? [];
  if (globs.length === 0) return globs;
  const { default: picomatch } = await import("picomatch");
  for (const glob of globs) {
    if (glob.trim() === "")
      throw new UsageError('--expose-tool needs a tool name or glob, such as "memory__read_*"');
    try {
      picomatch.makeRe(glob, { strictBrackets: true });
    } catch (error) {
      throw new UsageError(`--expose-tool "${glob}" is not a valid glob: ${(error as Error).message}`);
    }
  }
  return globs;
}

/**
 * Once every server's first start is over: an error naming each `--expose-tool` glob that
 * matches no tool, with the tools there are (a typo would otherwise serve nothing, silently).
 */
export async function unmatchedExposeTools(
  hub: Hub,
  globs: readonly string[],
): Promise<McplexError | undefined> {
  const { compileToolFilter } = await import("../../catalog/tool-filter.js");
  const names = hub.tools().map((tool) => tool.name);
  const unmatched = globs.filter((glob) => !names.some(compileToolFilter({ allow: [glob] })));
  if (unmatched.length === 0) return undefined;
  const notReady = hub
    .servers()
    .filter((s) => s.state !== "ready" && s.state !== "disabled")
    .map((s) => `${s.name} (${s.state})`);
  const which = unmatched.map((glob) => `"${glob}"`).join(", ");
  return new McplexError(
    "INVALID_ARGUMENT",
    `--expose-tool ${which} ${unmatched.length === 1 ? "matches" : "match"} no tool; the tools are: ${names.join(", ") || "none"}`,
    {
      hint:
        notReady.length > 0
          ? `servers whose tools are not known yet: ${notReady.join(", ")}; globs match exposed names such as "server__tool"`
          : 'globs match exposed names such as "server__tool"; `mcplex list` shows them',
    },
  );
}
