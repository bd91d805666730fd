/** The lists a server publishes, each refreshed on its own. */
export type ListKind = "tools" | "resources" | "resourceTemplates" | "prompts";

/** Which lists a `list_changed` notification makes stale. */
export const LIST_CHANGED: Record<string, ListKind[]> = {
  "notifications/tools/list_changed": ["tools"],
  "notifications/prompts/list_changed": ["prompts"],
  "notifications/resources/list_changed": ["resources", "resourceTemplates"],
};
