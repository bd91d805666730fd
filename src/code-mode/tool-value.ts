import type { CallToolResult } from "@modelcontextprotocol/client";

/** What a tool function gives the script: its value, or the text of the error it throws. */
export type ToolOutcome = { ok: true; value: unknown } | { ok: false; message: string };

/** The text of the text blocks, one per line. */
function textOf(content: CallToolResult["content"]): string {
  return (content ?? [])
    .filter((block): block is { type: "text"; text: string } => block?.type === "text")
    .map((block) => block.text)
    .join("\n");
}

/**
 * A tool's result as the script sees it: `structuredContent` when the tool gave one; else the
 * text of its content, parsed when it is JSON; else (images, audio, resources) the content
 * blocks themselves. An `isError` result becomes the error's text.
 */
export function toolOutcome(result: CallToolResult): ToolOutcome {
  if (result === null || typeof result !== "object")
    return { ok: false, message: "the tool returned no result" };
  if (result.isError === true) return { ok: false, message: textOf(result.content) || "the tool failed" };
  if (result.structuredContent !== undefined) return { ok: true, value: result.structuredContent };
  const content = result.content ?? [];
  if (content.some((block) => block?.type !== "text")) return { ok: true, value: content };
  const text = textOf(content);
  const trimmed = text.trimStart();
  if (/^[[{"0-9-]|^(true|false|null)\b/.test(trimmed)) {
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      // Text that merely starts like JSON stays text.
    }
  }
  return { ok: true, value: text };
}
