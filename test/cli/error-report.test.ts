import { describe, expect, it } from "vitest";
import { LlmError } from "../../src/agent/llm-error.js";
import { EXIT, errorReport, exitCodeOf, UsageError } from "../../src/cli/error-report.js";
import { ConfigError, McplexError, RpcError, TimeoutError } from "../../src/errors.js";

describe("errorReport", () => {
  it("names server, tool, JSON-RPC code and message of a server's error, with a hint for bad params", () => {
    const report = errorReport(new RpcError(-32602, "message: expected string"), {
      tool: "api__echo",
      server: "api",
      originalName: "echo",
    });
    expect(report.line).toBe(
      'api__echo: server "api" answered tool "echo" with error -32602: message: expected string',
    );
    expect(report.hint).toContain("inputSchema");
    expect(report.exit).toBe(EXIT.toolError);
  });

  it("keeps a multi-line message on one line, the stderr tail in parentheses", () => {
    const error = new McplexError(
      "UPSTREAM_START_FAILED",
      "gh: exited with code 1\n--- stderr ---\nboom\nbye",
      {
        server: "gh",
      },
    );
    expect(errorReport(error).line).toBe(
      'server "gh": exited with code 1 (boom / bye) [UPSTREAM_START_FAILED]',
    );
  });

  it("hides secrets with the redactor it is given", () => {
    const report = errorReport(new RpcError(-32603, "token sk-123 refused"), {
      redact: (text) => text.replaceAll("sk-123", "***"),
    });
    expect(report.line).not.toContain("sk-123");
  });

  it("says what an unexpected error is, its cause, and how to get the stack", () => {
    const error = new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:9") });
    const report = errorReport(error);
    expect(report.line).toBe("TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:9");
    expect(report.hint).toContain("MCPLEX_DEBUG=1");
    expect(report.exit).toBe(EXIT.error);
  });

  it("maps each kind of failure to its documented exit code", () => {
    expect(exitCodeOf(new UsageError("x"))).toBe(2);
    expect(exitCodeOf(new ConfigError("x"))).toBe(2);
    expect(exitCodeOf(new McplexError("SECRET_MISSING", "x"))).toBe(2);
    expect(exitCodeOf(new McplexError("TOOL_NOT_FOUND", "x"))).toBe(2);
    expect(exitCodeOf(new McplexError("UPSTREAM_UNAVAILABLE", "x"))).toBe(3);
    expect(exitCodeOf(new TimeoutError("x"))).toBe(3);
    expect(exitCodeOf(new LlmError("x", { kind: "network" }))).toBe(3);
    expect(exitCodeOf(new LlmError("x", { kind: "http", status: 401 }))).toBe(2);
    expect(exitCodeOf(new RpcError(-32603, "x"))).toBe(1);
    expect(exitCodeOf(new Error("x"))).toBe(1);
  });
});
