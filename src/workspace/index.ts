/** The built-in workspace MCP server: files under a root, with glob permissions. */

export { writeFileAtomic } from "./atomic-write.js";
export { completePaths } from "./completion.js";
export { DEFAULT_LIMITS, type WorkspaceContext, type WorkspaceLimits } from "./context.js";
export { formatSize, looksBinary, mimeTypeOf } from "./file-content.js";
export { applyEdits } from "./file-tools.js";
export { descriptorPath } from "./fs-checks.js";
export { GIT_RULE, type PermissionDecision, Permissions, type WorkspaceOp } from "./permissions.js";
export { type ResourceUpdateListener, ResourceWatcher } from "./resource-watcher.js";
export { FILE_TEMPLATE_NAME, resolveResourceUri } from "./resources.js";
export { type OpenedFile, type ResolvedPath, Sandbox, type WriteOptions } from "./sandbox.js";
export { type SearchMatch, type SearchOptions, type SearchResult, searchFiles } from "./search.js";
export { type ServeWorkspaceStdioOptions, serveWorkspaceStdio } from "./stdio.js";
export { WorkspaceError, type WorkspaceErrorReason } from "./workspace-error.js";
export {
  createWorkspaceServer,
  WORKSPACE_SERVER_VERSION,
  type WorkspaceServerOptions,
} from "./workspace-server.js";
