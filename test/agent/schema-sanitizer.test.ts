import { describe, expect, it } from "vitest";
import { resolveSchemaProfile, sanitizeSchema, toChatTools } from "../../src/agent/schema-sanitizer.js";

const memoryLike = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  $defs: {
    Entity: {
      type: "object",
      properties: { name: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
      required: ["name"],
      additionalProperties: false,
    },
  },
  properties: {
    entity: { $ref: "#/$defs/Entity" },
    note: { anyOf: [{ type: "string", format: "uri" }, { type: "null" }], default: null },
    count: { type: ["integer", "null"], minimum: 0 },
    mode: { type: "integer", enum: [1, 2] },
    kind: { const: "fixed" },
    empty: { type: "object", properties: {} },
  },
  required: ["entity", "missing"],
  additionalProperties: false,
};

describe("sanitizeSchema", () => {
  it("default: drops $schema and makes sure of an object with properties", () => {
    expect(sanitizeSchema({ $schema: "x", type: "object" }, "default").parameters).toEqual({
      type: "object",
      properties: {},
    });
    expect(sanitizeSchema({}, "default").parameters).toEqual({ type: "object", properties: {} });
  });

  it("gemini: keeps only accepted keys, makes anyOf-with-null nullable and inlines local $ref", () => {
    const { parameters } = sanitizeSchema(memoryLike, "gemini");
    expect(parameters).toEqual({
      type: "object",
      properties: {
        entity: {
          type: "object",
          properties: { name: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
          required: ["name"],
        },
        note: { type: "string", nullable: true },
        count: { type: "integer", nullable: true, minimum: 0 },
        mode: { type: "integer", description: "One of: [1,2]." },
        kind: { enum: ["fixed"] },
        empty: { type: "object" },
      },
      required: ["entity"],
    });
    expect(JSON.stringify(parameters)).not.toMatch(/\$ref|\$defs|additionalProperties|default|\$schema/);
  });

  it("gemini: survives a recursive $ref", () => {
    const tree = {
      type: "object",
      properties: { node: { $ref: "#/definitions/Node" } },
      definitions: { Node: { type: "object", properties: { child: { $ref: "#/definitions/Node" } } } },
    };
    const { parameters } = sanitizeSchema(tree, "gemini");
    expect(parameters).toEqual({
      type: "object",
      properties: { node: { type: "object", properties: { child: { type: "object" } } } },
    });
  });

  it("strict: closes objects, requires every property and makes optional ones nullable", () => {
    const schema = {
      type: "object",
      properties: {
        a: { type: "string", minLength: 1 },
        b: { type: "number", default: 3 },
        c: { enum: ["x", "y"], type: "string" },
      },
      required: ["a"],
    };
    const { parameters, strict } = sanitizeSchema(schema, "strict");
    expect(strict).toBe(true);
    expect(parameters).toEqual({
      type: "object",
      properties: {
        a: { type: "string" },
        b: { type: ["number", "null"] },
        c: { type: ["string", "null"], enum: ["x", "y", null] },
      },
      required: ["a", "b", "c"],
      additionalProperties: false,
    });
  });

  it("strict: falls back to non-strict for free-form objects", () => {
    const { parameters, strict } = sanitizeSchema(
      { type: "object", properties: { meta: { type: "object", additionalProperties: { type: "string" } } } },
      "strict",
    );
    expect(strict).toBe(false);
    expect(parameters).toMatchObject({ properties: { meta: { additionalProperties: { type: "string" } } } });
  });

  it("does not modify the catalog's schema", () => {
    const copy = structuredClone(memoryLike);
    sanitizeSchema(memoryLike, "gemini");
    sanitizeSchema(memoryLike, "strict");
    expect(memoryLike).toEqual(copy);
  });
});

describe("resolveSchemaProfile and toChatTools", () => {
  it("picks gemini by provider or base URL, strict by provider, else default", () => {
    expect(resolveSchemaProfile({ baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai" })).toBe(
      "gemini",
    );
    expect(resolveSchemaProfile({ provider: "gemini", baseUrl: "http://proxy" })).toBe("gemini");
    expect(resolveSchemaProfile({ provider: "openai-strict" })).toBe("strict");
    expect(
      resolveSchemaProfile({ provider: "openai", baseUrl: "https://generativelanguage.googleapis.com" }),
    ).toBe("default");
    expect(resolveSchemaProfile({ baseUrl: "http://localhost:11434/v1" })).toBe("default");
  });

  it("builds function tools with the strict flag only when the schema allows it", () => {
    const tools = toChatTools(
      [
        {
          name: "a",
          description: "A",
          inputSchema: { type: "object", properties: { x: { type: "string" } } },
        },
        { name: "b", inputSchema: { type: "object", additionalProperties: true } },
      ],
      "strict",
    );
    expect(tools[0]).toMatchObject({
      type: "function",
      function: { name: "a", description: "A", strict: true },
    });
    expect(tools[1]!.function.strict).toBeUndefined();
    expect(tools[1]!.function).not.toHaveProperty("description");
  });
});
