import { allOptional, jsDoc, propertyKey, schemaType } from "./schema-type.js";
import { type CodeTool, toolBindings } from "./tool-bindings.js";

const HEADER = `/**
 * The tools this script may call. Each returns the tool's structured result when it has one,
 * else its text (parsed when it is JSON); a tool error throws an Error with the tool's text.
 * There is console.log, but no fetch, require, process, file system or timers.
 */
`;

/**
 * TypeScript declarations of the tools a script sees, `declare const tools: { server: { tool(args): Promise<T> } }`,
 * with each tool's description as JSDoc and its input (and output, when it has an output schema)
 * typed from its JSON Schemas. The same tools give the same text, in any order.
 *
 * @example
 * const prompt = `Write a script against these tools:\n${toolDeclarations(tools)}`;
 */
export function toolDeclarations(tools: readonly CodeTool[]): string {
  const byNamespace = new Map<string, string[]>();
  for (const { namespace, method, tool } of toolBindings(tools)) {
    const indent = "    ";
    const args = schemaType(tool.inputSchema ?? { type: "object" }, indent);
    const output = tool.outputSchema === undefined ? "unknown" : schemaType(tool.outputSchema, indent);
    const optional = allOptional(tool.inputSchema) ? "?" : "";
    const doc = jsDoc({ description: tool.description }, indent);
    const members = byNamespace.get(namespace) ?? [];
    members.push(`${doc}${indent}${propertyKey(method)}(args${optional}: ${args}): Promise<${output}>;\n`);
    byNamespace.set(namespace, members);
  }
  const namespaces = [...byNamespace].map(
    ([namespace, members]) => `  ${propertyKey(namespace)}: {\n${members.join("")}  };\n`,
  );
  return `${HEADER}declare const tools: {\n${namespaces.join("")}};\n`;
}
