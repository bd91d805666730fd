/**
 * An MCP tool result as the plain string a `role: "tool"` message carries.
 */
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/client";

/**
 * Renders a tool result for the model: text as is, `structuredContent` as JSON (it
 * supersedes its text mirror), images, audio and blobs summarised, never inlined.
 *
 * @example toolResultText({ content: [{ type: "text", text: "3" }] }) // "3"
 */
export function toolResultText(result: CallToolResult): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const parts: string[] = [];
  const structured = result.structuredContent;
  if (structured !== undefined && structured !== null) parts.push(JSON.stringify(structured));
  for (const block of blocks) {
    if (block.type === "text" && structured !== undefined && structured !== null) continue;
    parts.push(blockText(block));
  }
  const text = parts.join("\n").trim();
  return text === "" ? (result.isError ? "The tool failed without a message." : "(no output)") : text;
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image: ${block.mimeType}, ${formatBytes(base64Bytes(block.data))}]`;
    case "audio":
      return `[audio: ${block.mimeType}, ${formatBytes(base64Bytes(block.data))}]`;
    case "resource_link":
      return `[resource link: ${block.name} <${block.uri}>${block.mimeType ? ` (${block.mimeType})` : ""}]`;
    case "resource": {
      const resource = block.resource;
      if ("text" in resource && typeof resource.text === "string") return resource.text;
      const blob = "blob" in resource && typeof resource.blob === "string" ? resource.blob : "";
      return `[resource: ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ""}, ${formatBytes(base64Bytes(blob))}]`;
    }
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} kB`;
}
