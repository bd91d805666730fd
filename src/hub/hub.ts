import type {
  CallToolResult,
  CompleteResult,
  GetPromptResult,
  ReadResourceResult,
} from "@modelcontextprotocol/client";
import type { Catalog } from "../catalog/catalog.js";
import type {
  CatalogPrompt,
  CatalogResource,
  CatalogResourceTemplate,
  CatalogTool,
  ResourceTarget,
} from "../catalog/types.js";
import type { UserRef } from "../credentials/user-credentials.js";
import type { SkillsPage } from "../ext/skills/skill-listing.js";
import type { HubSkill, LoadedSkill } from "../ext/skills/skill-reader.js";
import { notFound } from "../servers/lookup-errors.js";
import type { CallRequest, Interceptor, JsonObject } from "./call-pipeline.js";
import { HubAdministration } from "./hub-administration.js";
import type { CallOptions, LoadSkillOptions } from "./hub-types.js";
import type { PipelineExtension, PipelineExtensionOptions } from "./pipeline-extension.js";
import { RefCounts } from "./ref-counts.js";

/**
 * Many MCP servers behind one catalog. Servers start concurrently, each on its own
 * timeout; one that fails never delays or breaks the others. This file holds the catalog, the
 * calls and the skills; the administration of servers, users and secrets is the other half of
 * the API ({@link HubAdministration}). Both delegate to the parts the hub is assembled from
 * (`hub-assembly.ts`): `Servers`, `PerUserServers`, `CallPath`, `Skills`.
 *
 * @example
 * const hub = new Hub({ config: await loadConfig() });
 * await hub.start();
 * const result = await hub.callTool("github__search_issues", { q: "bug" }, { timeout: 10_000 });
 * await hub.close();
 */
export class Hub extends HubAdministration {
  /** Resource subscriptions by `server\0uri`, counted. */
  readonly #subscriptions = new RefCounts<string>();

  /** The catalog (read-only use: listings, name resolution, collisions). */
  get catalog(): Catalog {
    return this.parts.catalog;
  }

  /**
   * Tools of every ready server (as the catalog names them); lists past their `ttlMs` are
   * refreshed behind. With `user`, also the tools that user's own connections to per-user
   * servers listed (no other user's: a per-user server's list is its user's alone).
   */
  tools(profile?: string, user?: UserRef): readonly CatalogTool[] {
    this.parts.servers.refreshStale();
    return withOwn(this.parts.catalog.tools(profile), this.parts.perUser.userCatalog(user)?.tools(profile));
  }

  /**
   * The tools a model may see: {@link tools} less those only an MCP App calls (its
   * `_meta.ui.visibility` leaves out `"model"`). Such tools stay callable by name.
   */
  modelTools(profile?: string, user?: UserRef): readonly CatalogTool[] {
    this.parts.servers.refreshStale();
    return withOwn(
      this.parts.catalog.modelTools(profile),
      this.parts.perUser.userCatalog(user)?.modelTools(profile),
    );
  }

  resources(profile?: string): readonly CatalogResource[] {
    this.parts.servers.refreshStale();
    return this.parts.catalog.resources(profile);
  }

  resourceTemplates(profile?: string): readonly CatalogResourceTemplate[] {
    return this.parts.catalog.resourceTemplates(profile);
  }

  prompts(profile?: string): readonly CatalogPrompt[] {
    this.parts.servers.refreshStale();
    return this.parts.catalog.prompts(profile);
  }

  /**
   * Calls a tool by its exposed name (or the catalog entry a caller already resolved it to,
   * through the same profile). Resolves with the tool's result (`isError`
   * for tool-level errors); rejects with {@link NotFoundError} for unknown names,
   * `UpstreamUnavailableError` while the server is down, `TimeoutError`,
   * `AbortedError` or `RpcError` from the server. Errors and `isError` results coming
   * from the server have the config's secrets redacted (raw and encoded). Runs through the
   * hub's interceptors (see {@link use}).
   */
  callTool(
    tool: string | CatalogTool,
    args: Record<string, unknown> = {},
    options: CallOptions = {},
  ): Promise<CallToolResult> {
    return this.parts.calls.callTool(tool, args, options);
  }

  /**
   * Reads a resource by URI (as listed by the catalog, or matching a server's template), or
   * at the target a caller already resolved it to.
   */
  override readResource(
    uri: string | ResourceTarget,
    options: CallOptions = {},
  ): Promise<ReadResourceResult> {
    return this.parts.calls.readResource(uri, options);
  }

  /** Gets a prompt by its exposed name (or the catalog entry a caller already resolved it to). */
  getPrompt(
    name: string | CatalogPrompt,
    args: Record<string, string> = {},
    options: CallOptions = {},
  ): Promise<GetPromptResult> {
    return this.parts.calls.getPrompt(name, args, options);
  }

  /** Argument completion for a prompt (exposed name) or a resource template. */
  complete(
    ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string },
    argument: { name: string; value: string },
    options: CallOptions & { context?: { arguments?: Record<string, string> } } = {},
  ): Promise<CompleteResult> {
    return this.parts.calls.complete(ref, argument, options);
  }

  /**
   * Sends any request to server `server` as it is, through the same path as a tool call
   * (the interceptors, its config's timeout, `input_required` handling, secrets redacted from
   * errors): for methods the hub has no call of its own for (an extension's, a vendor's). The
   * caller maps names in `params` to the server's own.
   *
   * @example
   * await hub.forward("tasks", "tasks/get", { taskId: "42" }, { signal });
   */
  override forward(
    server: string,
    method: string,
    params: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<Record<string, unknown>> {
    return this.parts.calls.forward(server, method, params, options);
  }

  /**
   * One page of the skills of every server that declares the skills extension (SEP-2640), as a
   * gateway's `skills/list` answers it: see {@link listSkills}. With `profile`, only skills it
   * may read.
   */
  listSkills(options: CallOptions & { cursor?: string } = {}): Promise<SkillsPage> {
    return this.parts.skills.list(options);
  }

  /**
   * Every skill of every server that declares the skills extension: the listing only, no file
   * is read. Names may repeat across servers; a skill is its server and its URI.
   */
  skills(options: CallOptions = {}): Promise<HubSkill[]> {
    return this.parts.skills.all(options);
  }

  /**
   * The entry of the skill whose `SKILL.md` is `uri` (`skills/get` to its server), for a skill
   * known only by its URI.
   */
  getSkill(uri: string, options: CallOptions = {}): Promise<HubSkill> {
    return this.parts.skills.get(uri, options);
  }

  /**
   * Loads a skill for a model as a host must (SEP-2640): reads its `SKILL.md` only now, checks
   * its size, digest and frontmatter against the entry, and refuses it on any difference. A
   * skill known only by its URI is looked up first with {@link getSkill}.
   *
   * @throws McplexError `SKILL_VERIFICATION_FAILED`.
   */
  loadSkill(skill: HubSkill, options: LoadSkillOptions = {}): Promise<LoadedSkill> {
    return this.parts.skills.load(skill, options);
  }

  /**
   * Reads a file of a loaded skill (`references/GUIDE.md`, or its URI): only files its entry
   * lists, each checked against its size and digest there.
   *
   * @throws McplexError `SKILL_VERIFICATION_FAILED`.
   */
  readSkillFile(skill: LoadedSkill, path: string, options: CallOptions = {}): Promise<Uint8Array> {
    return this.parts.skills.readFile(skill, path, options);
  }

  /**
   * Adds an interceptor on the path of every call, whoever makes it (inside those added
   * before it), or with `at: "upstream"` around each request sent to a server. Returns the
   * function that removes it.
   *
   * @example
   * const off = hub.use((next) => async (request) => {
   *   if (request.target?.kind === "tool" && request.target.tool?.annotations?.destructiveHint)
   *     throw new RpcError(ErrorCode.InvalidRequest, "destructive tools are off");
   *   return next(request);
   * });
   */
  use(interceptor: Interceptor, options: { at?: "call" | "upstream" } = {}): () => void {
    return this.parts.calls.use(interceptor, options.at ?? "call");
  }

  /**
   * Runs a request the caller built through the interceptors and sends it to its target's
   * server: for embedders that make requests of their own (a front of their own).
   */
  handle(request: CallRequest): Promise<JsonObject> {
    return this.parts.calls.handle(request);
  }

  /**
   * The hub's pipeline with layers of the caller's own (a gateway's), outside and inside the
   * hub's interceptors, ending in `options.end`, which is handed the hub's dispatch (the send to
   * the server a request's target names): see {@link PipelineExtension}. Nothing reaches a
   * server around the hub's interceptors.
   *
   * @example
   * const pipeline = hub.extend({ outer: [audit], end: (dispatch) => (request) => dispatch(request) });
   * await pipeline.handle(request);
   */
  extend(options: PipelineExtensionOptions): PipelineExtension {
    return this.parts.calls.extend(options);
  }

  /**
   * Asks the server behind `uri` for `resource-updated` events about it (2025
   * `resources/subscribe`). Counted: the server is asked once however many callers
   * subscribe, and released when the last one unsubscribes.
   */
  async subscribeResource(
    uri: string,
    options: { profile?: string; signal?: AbortSignal } = {},
  ): Promise<void> {
    const target = this.parts.catalog.resolveResource(uri, options.profile);
    if (target === undefined) throw notFound("resource", uri, options.profile);
    if (this.#subscriptions.acquire(`${target.server}\0${target.uri}`))
      await this.parts.servers.entry(target.server).upstream.watchResource(target.uri, options.signal);
  }

  /** Releases one {@link subscribeResource}. */
  async unsubscribeResource(uri: string, options: { profile?: string } = {}): Promise<void> {
    const target = this.parts.catalog.resolveResource(uri, options.profile);
    if (target === undefined) return;
    if (this.#subscriptions.release(`${target.server}\0${target.uri}`))
      await this.parts.servers.entry(target.server).upstream.unwatchResource(target.uri);
  }

  /**
   * The tool behind an exposed name: the catalog's, else as {@link waitForTool} finds it (the
   * user's own connections, the servers still starting that may own it).
   */
  async findTool(
    name: string,
    options: { profile?: string; signal?: AbortSignal; user?: UserRef } = {},
  ): Promise<CatalogTool | undefined> {
    return this.parts.catalog.resolveTool(name, options.profile) ?? (await this.waitForTool(name, options));
  }
}

export type {
  CallOptions,
  HubEvent,
  HubOptions,
  LoadSkillOptions,
  ServerDetails,
  ServerStatus,
} from "./hub-types.js";

/** `shared` followed by a user's own tools whose names it does not hold (the same array without any). */
function withOwn(
  shared: readonly CatalogTool[],
  own: readonly CatalogTool[] | undefined,
): readonly CatalogTool[] {
  if (own === undefined || own.length === 0) return shared;
  const names = new Set(shared.map((t) => t.name));
  return [...shared, ...own.filter((t) => !names.has(t.name))];
}
