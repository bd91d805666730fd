// How the page shows what servers send back: tool results (text, images, audio, resource
// links, embedded resources, structuredContent, isError), resource contents and prompt
// messages. Text is always text (textContent), never parsed as HTML; images and audio are
// data: URLs of the bytes the server sent.

import { el } from "./dom.js";

const isImage = (mime) =>
  typeof mime === "string" && /^image\/(png|jpeg|gif|webp|bmp|x-icon|avif)$/.test(mime);

const isText = (mime) =>
  typeof mime === "string" && /^(text\/|application\/(json|xml|javascript|yaml)|.*\+(json|xml)$)/.test(mime);

/** Base64 of UTF-8 text as the text, or undefined when it is not valid UTF-8. */
function decodeText(base64) {
  try {
    const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** One content block. `open(uri)` is offered on resource links. */
export function contentBlock(block, { open } = {}) {
  switch (block?.type) {
    case "text":
      return el("pre", { class: "block text" }, block.text ?? "");
    case "image":
      return el(
        "figure",
        { class: "block image" },
        el("img", { src: `data:${block.mimeType};base64,${block.data}`, alt: `image (${block.mimeType})` }),
        el("figcaption", { class: "muted" }, block.mimeType),
      );
    case "audio":
      return el(
        "figure",
        { class: "block audio" },
        el("audio", { controls: true, src: `data:${block.mimeType};base64,${block.data}` }),
        el("figcaption", { class: "muted" }, block.mimeType),
      );
    case "resource_link": {
      const link = el(
        "div",
        { class: "block resource-link", "data-uri": block.uri },
        el("span", { class: "badge idle" }, "resource link"),
        " ",
        el("b", {}, block.title ?? block.name ?? ""),
        " ",
        el("code", {}, block.uri),
        block.mimeType === undefined ? "" : el("span", { class: "muted" }, ` ${block.mimeType}`),
      );
      if (open !== undefined) {
        const button = el("button", { type: "button", class: "small" }, "open");
        button.addEventListener("click", () => open(block.uri));
        link.append(" ", button);
      }
      if (block.description !== undefined) link.append(el("div", { class: "hint" }, block.description));
      return link;
    }
    case "resource":
      return el(
        "div",
        { class: "block embedded" },
        el("span", { class: "badge idle" }, "embedded resource"),
        ...resourceContents([block.resource]),
      );
    default:
      return el("pre", { class: "block json" }, JSON.stringify(block, null, 2));
  }
}

/** A tools/call result: an error badge when `isError`, its blocks, and its structuredContent. */
export function toolResult(result, options = {}) {
  const out = el("div", { class: `result ${result.isError === true ? "is-error" : "ok"}` });
  out.append(
    el(
      "div",
      { class: "result-head" },
      el(
        "span",
        { class: `badge ${result.isError === true ? "tool_error" : "ok"}` },
        result.isError === true ? "isError" : "ok",
      ),
    ),
  );
  for (const block of result.content ?? []) out.append(contentBlock(block, options));
  if (result.structuredContent !== undefined) {
    out.append(
      el("h4", {}, "structuredContent"),
      el("pre", { class: "block structured" }, JSON.stringify(result.structuredContent, null, 2)),
    );
  }
  return out;
}

/**
 * The contents of a resources/read (or of an embedded resource): text (also a blob of a text
 * type), an image preview, or the size of other bytes.
 */
export function resourceContents(contents) {
  return (contents ?? []).map((c) => {
    const head = el(
      "div",
      { class: "muted" },
      c.uri ?? "",
      c.mimeType === undefined ? "" : ` · ${c.mimeType}`,
    );
    if (typeof c.text === "string")
      return el("div", { class: "content" }, head, el("pre", { class: "block text" }, c.text));
    if (typeof c.blob === "string" && isImage(c.mimeType))
      return el(
        "div",
        { class: "content" },
        head,
        el("img", { class: "preview", src: `data:${c.mimeType};base64,${c.blob}`, alt: c.uri ?? "image" }),
      );
    if (typeof c.blob === "string" && isText(c.mimeType)) {
      const text = decodeText(c.blob);
      if (text !== undefined)
        return el("div", { class: "content" }, head, el("pre", { class: "block text" }, text));
    }
    if (typeof c.blob === "string") {
      const bytes =
        Math.floor((c.blob.length * 3) / 4) - (c.blob.endsWith("==") ? 2 : c.blob.endsWith("=") ? 1 : 0);
      return el("div", { class: "content" }, head, el("p", { class: "muted" }, `binary, ${bytes} bytes`));
    }
    return el("pre", { class: "block json" }, JSON.stringify(c, null, 2));
  });
}

/** A prompts/get result: its description and each message with its role. */
export function promptMessages(result, options = {}) {
  const out = el("div", { class: "messages" });
  if (result.description !== undefined) out.append(el("p", { class: "muted" }, result.description));
  for (const message of result.messages ?? []) {
    out.append(
      el(
        "div",
        { class: `message ${message.role}` },
        el("span", { class: "badge idle role" }, message.role),
        contentBlock(message.content, options),
      ),
    );
  }
  return out;
}
