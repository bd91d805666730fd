import type { ResourceWatcher } from "./resource-watcher.js";
import type { RootWall } from "./root-wall.js";

/** Size and count limits of the workspace server; every field has a default. */
export interface WorkspaceLimits {
  /** Largest file `read_file` returns whole (a line range may come from any file). Default 1 MiB. */
  maxReadBytes: number;
  /** Largest file `resources/read` returns. Default 10 MiB. */
  maxResourceBytes: number;
  /** Default cap on bytes `search_files` reads per call. Default 256 MiB. */
  maxSearchBytes: number;
  /** Default cap on `search_files` results. Default 200. */
  maxSearchResults: number;
  /** Most entries `list_directory` returns. Default 2000. */
  maxListEntries: number;
  /** Resources per `resources/list` page. Default 200. */
  pageSize: number;
  /** Longest a `search_files` regex may run on one file before the call fails. Default 5 s. */
  regexTimeoutMs: number;
}

/** The defaults of {@link WorkspaceLimits}. */
export const DEFAULT_LIMITS: WorkspaceLimits = {
  maxReadBytes: 1024 * 1024,
  maxResourceBytes: 10 * 1024 * 1024,
  maxSearchBytes: 256 * 1024 * 1024,
  maxSearchResults: 200,
  maxListEntries: 2000,
  pageSize: 200,
  regexTimeoutMs: 5000,
};

/** What the tool, resource and prompt registrations share. */
export interface WorkspaceContext {
  wall: RootWall;
  limits: WorkspaceLimits;
  watcher: ResourceWatcher;
}
