import { createRequire } from "node:module";
import type { Ajv2020 as Ajv, ValidateFunction } from "ajv/dist/2020.js";
import { sentArguments } from "../catalog/tool-overrides.js";
import type { CatalogTool } from "../catalog/types.js";
import type { ImmediateCheck } from "./guardrail-layer.js";

// ajv with the JSON Schema 2020-12 dialect MCP's schemas are written in; loaded with the first
// `schema` guardrail.
const load = createRequire(import.meta.url);
let ajv: Ajv | undefined;

function validator(): Ajv {
  if (ajv !== undefined) return ajv;
  const { Ajv2020 } = load("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
  // Strict mode off: servers' schemas carry keywords of their own (titles, examples, x-*).
  ajv = new Ajv2020({ strict: false, allErrors: true });
  return ajv;
}

/** Validators compiled once per schema object (a tool's schema is the same object until it relists). */
const compiled = new WeakMap<object, ValidateFunction>();

function compile(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = validator().compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** ajv's errors in one line: where and what, the first five. */
function problems(validate: ValidateFunction): string {
  const errors = validate.errors ?? [];
  const listed = errors
    .slice(0, 5)
    .map((e) => `${e.instancePath === "" ? "(top)" : e.instancePath} ${e.message ?? "is not valid"}`);
  return listed.join("; ") + (errors.length > 5 ? `; and ${errors.length - 5} more` : "");
}

/**
 * `schema`: a call's arguments (with those an override fixes or defaults, as the server will get
 * them) checked against the tool's own `inputSchema` before they reach its server, and a result's `structuredContent` against its `outputSchema` after. A schema ajv
 * cannot compile makes the guardrail fail (closed, unless `failOpen`).
 */
export function schemaGuardrail(): ImmediateCheck {
  return {
    request(args, tool: CatalogTool) {
      const schema = tool.tool.inputSchema as object | undefined;
      if (schema === undefined) return { action: "pass" };
      const validate = compile(schema);
      // What the server will get: with the arguments an override fixes or defaults.
      return validate(sentArguments(tool, args as Record<string, unknown>))
        ? { action: "pass" }
        : { action: "refuse", message: `the arguments do not match its inputSchema: ${problems(validate)}` };
    },
    response(result, tool: CatalogTool) {
      const schema = tool.tool.outputSchema as object | undefined;
      if (schema === undefined || result.isError === true) return { action: "pass" };
      if (result.structuredContent === undefined)
        return {
          action: "refuse",
          message: "it declares an outputSchema and its result has no structuredContent",
        };
      const validate = compile(schema);
      return validate(result.structuredContent)
        ? { action: "pass" }
        : {
            action: "refuse",
            message: `its structuredContent does not match its outputSchema: ${problems(validate)}`,
          };
    },
  };
}
