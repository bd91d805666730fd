import { Ajv2020 } from "ajv/dist/2020.js";

/**
 * The rules of the MCP Server Card draft (SEP-2127; `experimental-ext-server-card` at 8924e08)
 * and of its AI Catalog entries, written out here as JSON Schema 2020-12 for ajv: the required
 * fields, the `$schema` URL, the `namespace/name` pattern, the length bounds, the two remote
 * transport types and the URL pattern of a remote. Objects stay open, as the draft's are.
 */
const INPUT = {
  type: "object",
  properties: {
    description: { type: "string" },
    isRequired: { type: "boolean" },
    isSecret: { type: "boolean" },
    format: { enum: ["string", "number", "boolean", "filepath"] },
    default: { type: "string" },
    placeholder: { type: "string" },
    value: { type: "string" },
    choices: { type: "array", items: { type: "string" } },
  },
};

const SERVER_CARD = {
  type: "object",
  required: ["$schema", "name", "version", "description"],
  properties: {
    $schema: {
      type: "string",
      pattern: "^https://static\\.modelcontextprotocol\\.io/schemas/v1/server-card\\.schema\\.json$",
    },
    name: { type: "string", minLength: 3, maxLength: 200, pattern: "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$" },
    version: { type: "string", maxLength: 255 },
    description: { type: "string", minLength: 1, maxLength: 100 },
    title: { type: "string", minLength: 1, maxLength: 100 },
    websiteUrl: { type: "string" },
    remotes: {
      type: "array",
      items: {
        type: "object",
        required: ["type", "url"],
        properties: {
          type: { enum: ["streamable-http", "sse"] },
          url: { type: "string", pattern: "^(https?://[^\\s]+|\\{[a-zA-Z_][a-zA-Z0-9_]*\\}[^\\s]*)$" },
          headers: {
            type: "array",
            items: {
              allOf: [INPUT],
              required: ["name"],
              properties: {
                name: { type: "string" },
                variables: { type: "object", additionalProperties: INPUT },
              },
            },
          },
          variables: { type: "object", additionalProperties: INPUT },
          supportedProtocolVersions: { type: "array", items: { type: "string" } },
        },
      },
    },
    _meta: { type: "object" },
  },
};

const AI_CATALOG = {
  type: "object",
  required: ["specVersion", "entries"],
  properties: {
    specVersion: { type: "string" },
    entries: {
      type: "array",
      items: {
        type: "object",
        required: ["identifier", "type"],
        properties: {
          identifier: { type: "string", pattern: "^urn:air:[^:]+:[^:]+:[^:]+$" },
          type: { const: "application/mcp-server-card+json" },
          url: { type: "string", pattern: "^https?://" },
          data: SERVER_CARD,
        },
        oneOf: [{ required: ["url"] }, { required: ["data"] }],
      },
    },
  },
};

const ajv = new Ajv2020({ allErrors: true, strict: false });

/** Checks a document against the draft's Server Card rules; the errors, empty when it passes. */
export const validateServerCard = ajv.compile(SERVER_CARD);
/** Checks a document against the draft's AI Catalog rules (with MCP Server Card entries). */
export const validateAiCatalog = ajv.compile(AI_CATALOG);
