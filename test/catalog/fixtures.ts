import type { Prompt, Resource, ResourceTemplateType, Tool } from "@modelcontextprotocol/client";
import type { ServerSnapshot } from "../../src/catalog/index.js";

/** A minimal tool as a server would list it. */
export function tool(name: string, extra: Partial<Tool> = {}): Tool {
  return { name, inputSchema: { type: "object" }, ...extra };
}

export function prompt(name: string): Prompt {
  return { name };
}

export function resource(uri: string, name = uri): Resource {
  return { uri, name };
}

export function template(uriTemplate: string, name = uriTemplate): ResourceTemplateType {
  return { uriTemplate, name };
}

/** A ready server listing tools by name, plus any other snapshot fields. */
export function server(name: string, tools: string[], extra: Partial<ServerSnapshot> = {}): ServerSnapshot {
  return { server: name, state: "ready", tools: tools.map((t) => tool(t)), ...extra };
}

export { rng } from "../support/rng.js";

const UGLY = [
  ..."abcXYZ019_-",
  ".",
  "/",
  " ",
  "\t",
  ":",
  "@",
  "é",
  "ß",
  "日本",
  "🙂",
  "\u0000",
  "\ud800",
  "__",
  "%20",
  "{x}",
];

/** A random, possibly ugly, name of 0..maxLength pieces. */
export function uglyName(next: () => number, maxLength = 130): string {
  const length = Math.floor(next() * maxLength);
  let out = "";
  for (let i = 0; i < length; i++) out += UGLY[Math.floor(next() * UGLY.length)];
  return out;
}

/** Shuffles a copy with the given PRNG. */
export function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
