import { describe, expect, it } from "vitest";
import { scopeRules } from "../../src/access/access-rules.js";
import { resolvedNames } from "../../src/access/resolved-names.js";
import type { CatalogTool } from "../../src/catalog/types.js";
import { ConnectRequiredError } from "../../src/credentials/user-credentials.js";
import type { RequestTarget } from "../../src/hub/call-pipeline.js";

// Which names `auth.require` reads of a target: those of what it resolved to. The routes
// themselves are attacked end to end in target-scopes.hostile.test.ts.

const showReport = {
  name: "alpha__show_report",
  originalName: "show_report",
  server: "alpha",
} as CatalogTool;

const rules = scopeRules([
  { tools: ["alpha__*"], scopes: ["admin"] },
  { servers: ["mail"], scopes: ["mail"] },
  { resources: ["file:///secret/*"], scopes: ["secret"] },
]);

describe("resolvedNames and auth.require", () => {
  it("matches a tool by its exposed name whatever name the request used", () => {
    const byAppName: RequestTarget = { kind: "tool", name: "show_report", server: "alpha", tool: showReport };
    expect(resolvedNames(byAppName)).toMatchObject({ server: "alpha", tool: "alpha__show_report" });
    expect(rules(byAppName, [])).toEqual(["admin"]);
    expect(rules(byAppName, ["admin"])).toEqual([]);
  });

  it("matches a task's requests as the call of the tool that created it", () => {
    const task: RequestTarget = {
      kind: "task",
      name: "mcplex-task.x.y",
      server: "alpha",
      taskId: "t1",
      tool: "alpha__show_report",
    };
    expect(rules(task, [])).toEqual(["admin"]);
  });

  it("checks a tool of a per-user server not connected yet against the server that refused", () => {
    const unreachable: RequestTarget = {
      kind: "tool",
      name: "mail__send",
      unreachable: new ConnectRequiredError("mail", "http://127.0.0.1/connect/mail"),
    };
    expect(resolvedNames(unreachable).server).toBe("mail");
    expect(rules(unreachable, [])).toEqual(["mail"]);
  });

  it("matches a resource by any URI that names it: as asked, its server's own, qualified", () => {
    const qualified: RequestTarget = {
      kind: "resource",
      uri: "mcplex://docs/file%3A%2F%2F%2Fsecret%2Fkeys",
      server: "docs",
      resource: { server: "docs", uri: "file:///secret/keys", available: true, via: "qualified" },
    };
    expect(resolvedNames(qualified).uris).toContain("file:///secret/keys");
    expect(rules(qualified, [])).toEqual(["secret"]);
  });
});
