import { McpServer } from "@modelcontextprotocol/server";
import type { WorkspaceRule } from "../config/types.js";
import { DEFAULT_LIMITS, type WorkspaceContext, type WorkspaceLimits } from "./context.js";
import { registerDirectoryTools } from "./directory-tools.js";
import { registerFileTools } from "./file-tools.js";
import { Permissions } from "./permissions.js";
import { registerPrompts } from "./prompts.js";
import { ResourceWatcher } from "./resource-watcher.js";
import { registerResources } from "./resources.js";
import { RootWall } from "./root-wall.js";
import { registerSearchFilesTool } from "./search-files-tool.js";

/** Options of {@link createWorkspaceServer}. */
export interface WorkspaceServerOptions {
  /** The directory served; nothing outside it is ever read or written. */
  root: string;
  /** Allow writing wherever no rule decides otherwise. Default `false` (read-only). */
  allowWrite?: boolean;
  /** Glob rules on root-relative paths; the first match decides. `.git` is never accessible. */
  rules?: WorkspaceRule[];
  /** Server name reported to clients. Default `mcplex-workspace`. */
  name?: string;
  limits?: Partial<WorkspaceLimits>;
  /**
   * A watcher shared with the serving entry (so `subscriptions/listen` seen on the wire can
   * register files); by default each server owns one and closes it with the connection.
   */
  watcher?: ResourceWatcher;
}

/** Version reported in `serverInfo`. */
export const WORKSPACE_SERVER_VERSION = "0.1.0";

let instances = 0;

/**
 * The built-in workspace MCP server: files under `root` as tools (`read_file`, `list_directory`,
 * `search_files`, and `write_file`/`edit_file` when writing is allowed anywhere), as `file://`
 * resources with subscriptions, and a few prompts with path completion. Works for clients of
 * both protocol generations when served through `serveStdio` (see {@link serveWorkspaceStdio})
 * or `createMcpHandler`.
 *
 * @example
 * const server = createWorkspaceServer({ root: "/srv/project", rules: [{ pattern: "out/**", ops: ["read", "write"] }] });
 * await server.connect(transport);
 */
export function createWorkspaceServer(options: WorkspaceServerOptions): McpServer {
  const wall = new RootWall(options.root, new Permissions(options.rules ?? [], options.allowWrite ?? false));
  const ownWatcher = options.watcher === undefined;
  const watcher = options.watcher ?? new ResourceWatcher();
  const ctx: WorkspaceContext = { wall, limits: { ...DEFAULT_LIMITS, ...options.limits }, watcher };
  const server = new McpServer(
    { name: options.name ?? "mcplex-workspace", version: WORKSPACE_SERVER_VERSION },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: true, listChanged: false },
        prompts: { listChanged: false },
        completions: {},
      },
      instructions: `Files under ${wall.root}. Paths are relative to that root. ${
        wall.permissions.canWriteAnything ? "Some paths are writable." : "Read-only."
      } .git is not accessible.`,
    },
  );
  registerFileTools(server, ctx);
  registerDirectoryTools(server, ctx);
  registerSearchFilesTool(server, ctx);
  const key = `connection:${++instances}`;
  registerResources(server, ctx, key);
  registerPrompts(server, ctx);

  // A 2025 connection gets updates for what it subscribed; `listen:` keys come from 2026
  // `subscriptions/listen`, where the SDK's entry routes each update to the right stream.
  const stop = watcher.onUpdated((uri, keys) => {
    if (!server.isConnected()) return;
    if (!keys.has(key) && ![...keys].some((k) => k.startsWith("listen:"))) return;
    server.server.sendResourceUpdated({ uri }).catch(() => undefined);
  });
  const previous = server.server.onclose;
  server.server.onclose = () => {
    stop();
    watcher.unsubscribe(key);
    if (ownWatcher) watcher.close();
    previous?.();
  };
  return server;
}
