import { describe, expect, it } from "vitest";
import { runCode, toIdentifier, toolBindings } from "../../src/code-mode/index.js";

describe("names of tools in the script", () => {
  it("makes identifiers of server and tool names", () => {
    expect(
      ["get-sum", "2fa", "", "a.b c", "__proto__", "constructor", "then", "ok_$1"].map(toIdentifier),
    ).toEqual(["get_sum", "_2fa", "_", "a_b_c", "__proto___", "constructor_", "then_", "ok_$1"]);
  });

  it("tells apart names that make the same identifier, the same way whatever the order", () => {
    const tools = [
      { server: "my_server", name: "get-item", exposed: "b__get-item" },
      { server: "my-server", name: "get_item", exposed: "a__get_item" },
      { server: "my-server", name: "get-item", exposed: "a__get-item" },
    ];
    const shown = (list: typeof tools) =>
      toolBindings(list).map((b) => `${b.tool.exposed} -> ${b.namespace}.${b.method}`);
    expect(shown(tools)).toEqual([
      "a__get-item -> my_server.get_item",
      "a__get_item -> my_server.get_item_2",
      "b__get-item -> my_server_2.get_item",
    ]);
    expect(shown([...tools].reverse())).toEqual(shown(tools));
  });

  it("calls tools whose names are Object.prototype's own", async () => {
    const tools = [
      { server: "__proto__", name: "constructor", exposed: "p__c" },
      { server: "__proto__", name: "toString", exposed: "p__t" },
    ];
    const result = await runCode({
      code: "[await tools.__proto___.constructor_({}), await tools.__proto___.toString({ x: 1 })]",
      tools,
      callTool: async (name, args) => ({ content: [{ type: "text", text: JSON.stringify({ name, args }) }] }),
    });
    expect(result.value).toEqual([
      { name: "p__c", args: {} },
      { name: "p__t", args: { x: 1 } },
    ]);
  });

  it("refuses a tool listed twice", async () => {
    const tool = { server: "s", name: "t", exposed: "s__t" };
    expect(() => toolBindings([tool, tool])).toThrow(/listed twice/);
  });
});
