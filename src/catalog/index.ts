/**
 * The catalog: the merged, namespaced view of many MCP servers' tools, resources, resource
 * templates and prompts, with the naming policy, filters and profiles. No I/O.
 */

export { Catalog } from "./catalog.js";
export {
  compileUriTemplate,
  parseQualifiedUri,
  QUALIFIED_URI_PREFIX,
  qualifyUri,
  type UriTemplateMatcher,
} from "./resource-routing.js";
export { compileToolFilter, type NameMatcher } from "./tool-filter.js";
export {
  type IndexableTool,
  SUMMARY_LENGTH,
  summarize,
  type ToolHit,
  ToolIndex,
  type ToolIndexOptions,
  type ToolSearchOptions,
} from "./tool-index.js";
export {
  assignNames,
  type CollisionMember,
  EXPOSED_NAME_PATTERN,
  hashedName,
  MAX_EXPOSED_NAME_LENGTH,
  type NameAssignment,
  type NameCandidate,
  type NameCollision,
  nameHash,
  PREFIX_SEPARATOR,
  plainName,
  sanitizeName,
} from "./tool-naming.js";
export { SYNONYMS, splitWords, valueKinds } from "./tool-vocabulary.js";
export type {
  CatalogCollision,
  CatalogOptions,
  CatalogPrompt,
  CatalogResource,
  CatalogResourceTemplate,
  CatalogTool,
  CollisionKind,
  ResourceTarget,
  ServerSnapshot,
  ServerState,
} from "./types.js";
