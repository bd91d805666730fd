import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The published entry points, imported by name as a user would (Node resolves the
// package's own name through its `exports`), from the build.
const repo = path.resolve(import.meta.dirname, "..");

function exportedNames(specifier: string): string[] {
  const script = `import(${JSON.stringify(specifier)}).then((m) => console.log(JSON.stringify(Object.keys(m))))`;
  return (
    JSON.parse(
      execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", cwd: repo }),
    ) as string[]
  ).sort();
}

/**
 * Every value each entry exports, and nothing else: a new export is a decision, made here
 * (and in docs/api.md). Types are checked by the build, not here.
 */
const API = {
  mcplex: [
    "AbortedError",
    "Catalog",
    "ConfigError",
    "ConnectRequiredError",
    "ErrorCode",
    "Hub",
    "LocalServer",
    "McplexError",
    "NotFoundError",
    "PinLockError",
    "RpcError",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "SecretStore",
    "SecretStoreError",
    "TimeoutError",
    "ToolPins",
    "UpstreamUnavailableError",
    "checkConfig",
    "compose",
    "defaultConfig",
    "loadConfig",
    "lockFilePath",
    "memoryCredentialVault",
    "openPins",
    "parseConfig",
    "redact",
    "toolFingerprint",
    "userRefOf",
  ],
  "mcplex/agent": [
    "ChatClient",
    "LlmError",
    "SEARCH_TOOLS_NAME",
    "TextToolCallParser",
    "ToolCallAccumulator",
    "executeToolCall",
    "resolveLlmConfig",
    "resolveSchemaProfile",
    "runAgent",
    "sanitizeSchema",
    "toChatTools",
  ],
  "mcplex/workspace": [
    "DEFAULT_LIMITS",
    "ResourceWatcher",
    "WORKSPACE_SERVER_VERSION",
    "WorkspaceError",
    "createWorkspaceServer",
    "serveWorkspaceStdio",
  ],
  "mcplex/testing": ["mockErrors", "startMockLlmServer", "toolCallsAsText"],
} as const;

/** Internals that were public once: they must not come back by accident. */
const REMOVED = {
  mcplex: ["EXPOSED_NAME_PATTERN"],
  "mcplex/agent": [
    "startMockLlmServer",
    "mockErrors",
    "toolCallsAsText",
    "finishCall",
    "mintToolCallId",
    "completionToChunks",
    "DROPPABLE_PARAMS",
    "detectRejectedParam",
    "extractProviderError",
    "toolResultText",
    "searchTools",
    "searchToolsTool",
  ],
  "mcplex/workspace": [
    "formatSize",
    "looksBinary",
    "mimeTypeOf",
    "writeFileAtomic",
    "applyEdits",
    "completePaths",
    "descriptorPath",
    "GIT_RULE",
    "FILE_TEMPLATE_NAME",
    "resolveResourceUri",
    "searchFiles",
    "Sandbox",
    "Permissions",
  ],
} as const;

describe("package exports", () => {
  it.each(Object.entries(API))("%s exports its API and nothing more", (specifier, names) => {
    expect(exportedNames(specifier)).toEqual([...names].sort());
  });

  it.each(Object.entries(REMOVED))("%s does not export the internals it once did", (specifier, names) => {
    const keys = exportedNames(specifier);
    for (const name of names) expect(keys, name).not.toContain(name);
  });

  it("mcplex/gateway exports its API", () => {
    const keys = exportedNames("mcplex/gateway");
    expect(keys).toEqual(
      [
        "ANSWERING_CAPABILITIES",
        "CatalogView",
        "ClientSession",
        "ResultCache",
        "RotatingFile",
        "StreamSink",
        "auditLog",
        "DEFAULT_PORT",
        "Gateway",
        "GatewayMetrics",
        "compose",
        "healthReport",
        "serve",
        "serveGatewayStdio",
        "serverTools",
        "StaticTokenAuthenticator",
        "dashboardPage",
        "dashboardPageWith",
        "startHttpFront",
        "viewEngines",
        "viewResolver",
        "viewToolHost",
      ].sort(),
    );
  });

  it("every entry in package.json names built types and code", () => {
    const pkg = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8")) as {
      exports: Record<string, { types: string; default: string }>;
    };
    expect(Object.keys(pkg.exports).sort()).toEqual([
      ".",
      "./agent",
      "./gateway",
      "./testing",
      "./workspace",
    ]);
    for (const [entry, { types, default: code }] of Object.entries(pkg.exports)) {
      expect(existsSync(path.join(repo, types)), `${entry} types ${types}`).toBe(true);
      expect(existsSync(path.join(repo, code)), `${entry} code ${code}`).toBe(true);
    }
  });
});
