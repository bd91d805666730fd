import { jsonOf } from "../protocol/raw-json.js";
import { REV2024_PROTOCOL_VERSION } from "../protocol/rev2025.js";

type Block = Record<string, unknown>;

/** The content block types 2024-11-05 defines; its clients' schemas reject any other. */
const REV2024_BLOCKS = new Set(["text", "image", "resource"]);

/**
 * A result as a 2024-11-05 client can take it. Content blocks later revisions added
 * (`resource_link`, `audio`) fail its schemas' content union and with them the whole
 * result, so they become text blocks saying what they were. A tool result that carries only
 * `structuredContent` gets it as JSON text, since that client reads `content` alone. Fields it
 * merely does not know (`structuredContent` beside content, `title`, `outputSchema`,
 * `annotations`) are left: its schemas ignore unknown keys, and dropping `outputSchema` from
 * tools/list while a newer SDK still validates `structuredContent` would break that SDK.
 * Other results are returned as they are.
 */
export function resultForRev2024(protocolVersion: string, method: string, result: unknown): unknown {
  if (protocolVersion !== REV2024_PROTOCOL_VERSION || typeof result !== "object" || result === null) {
    return result;
  }
  // A result kept as text (a RawJson) is read here: its content may need rewriting.
  const value = jsonOf(result) as Record<string, unknown>;
  if (method === "tools/call") return toolResult(value);
  if (method === "prompts/get") return promptResult(value);
  return result;
}

function toolResult(result: Record<string, unknown>): Record<string, unknown> {
  const content = Array.isArray(result.content) ? (result.content as Block[]) : [];
  if (content.length === 0 && result.structuredContent !== undefined) {
    return { ...result, content: [{ type: "text", text: JSON.stringify(result.structuredContent) }] };
  }
  if (content.every((block) => REV2024_BLOCKS.has(String(block?.type)))) return result;
  return { ...result, content: content.map(asRev2024Block) };
}

function promptResult(result: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(result.messages)) return result;
  const messages = result.messages as Array<{ content?: Block }>;
  if (messages.every((m) => REV2024_BLOCKS.has(String(m?.content?.type)))) return result;
  return {
    ...result,
    messages: messages.map((m) =>
      m?.content === undefined ? m : { ...m, content: asRev2024Block(m.content) },
    ),
  };
}

function asRev2024Block(block: Block): Block {
  const type = String(block?.type);
  if (REV2024_BLOCKS.has(type)) return block;
  if (type === "resource_link") {
    const name = String(block.title ?? block.name ?? "");
    const description = typeof block.description === "string" ? `: ${block.description}` : "";
    return { type: "text", text: `Resource link: ${name} <${String(block.uri)}>${description}` };
  }
  const mimeType = typeof block.mimeType === "string" ? ` (${block.mimeType})` : "";
  return {
    type: "text",
    text: `[${type} content${mimeType} left out: protocol 2024-11-05 cannot carry it]`,
  };
}
