// Building the page's elements: text is always a text node, never parsed as HTML.

/** An element with attributes and children (strings become text nodes, never HTML). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== false) node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children)
    node.append(child instanceof Node ? child : document.createTextNode(String(child ?? "")));
  return node;
}

/** A badge (`<span class="badge kind">`). */
export function badge(text, kind = text) {
  return el("span", { class: `badge ${kind}` }, text);
}

/** A duration in ms as the page shows it. */
export const ms = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** An epoch time as a local clock time. */
export const clock = (epoch) => new Date(epoch).toLocaleTimeString();
