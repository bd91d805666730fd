/**
 * The built-in workspace MCP server: files under a root as tools, resources and prompts, with
 * glob permissions. Its root wall (path confinement), search and file helpers are internal.
 */

export { DEFAULT_LIMITS, type WorkspaceLimits } from "../../workspace/context.js";
export { type ResourceUpdateListener, ResourceWatcher } from "../../workspace/resource-watcher.js";
export { type ServeWorkspaceStdioOptions, serveWorkspaceStdio } from "../../workspace/stdio.js";
export { WorkspaceError, type WorkspaceErrorReason } from "../../workspace/workspace-error.js";
export {
  createWorkspaceServer,
  WORKSPACE_SERVER_VERSION,
  type WorkspaceServerOptions,
} from "../../workspace/workspace-server.js";
