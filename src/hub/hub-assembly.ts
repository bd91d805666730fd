import type { ReadResourceResult } from "@modelcontextprotocol/client";
import { Catalog } from "../catalog/catalog.js";
import type { CatalogTool } from "../catalog/types.js";
import { SecretSet } from "../config/redact.js";
import type { ServerConfig } from "../config/types.js";
import { PerUserServers } from "../credentials/per-user-servers.js";
import type { UserConnectionPlan } from "../credentials/user-credentials.js";
import { Composites } from "../ext/composites/composite-catalog.js";
import { Skills } from "../ext/skills/skills.js";
import { PinnedTools } from "../pins/pinned-tools.js";
import type { ToolListStore } from "../recording/tool-list-store.js";
import { Servers } from "../servers/servers.js";
import { hubToolLists } from "../servers/tool-lists.js";
import { Upstream, type UpstreamEvent } from "../upstream/upstream.js";
import { CallPath } from "./call-path.js";
import type { CallOptions, JsonObject } from "./call-pipeline.js";
import type { HubEvent, HubOptions } from "./hub-types.js";
import { ServerRequestRouter } from "./server-request-router.js";

/** The parts a hub is made of, wired to each other by {@link assembleHub}. */
export interface HubParts {
  readonly catalog: Catalog;
  /** What the hub redacts: the config's secrets, and those of every reload since. */
  readonly secrets: SecretSet;
  /** The last-seen tool list of each server (see `HubOptions.toolCache`). */
  readonly toolLists: ToolListStore;
  /** The configured servers, their connections and their administration. */
  readonly servers: Servers;
  /** Servers called with each signed-in user's own credentials: their connections and tools. */
  readonly perUser: PerUserServers;
  /** What calls do with the servers: the interceptors, dispatch, retries, redaction. */
  readonly calls: CallPath;
  /** The skills of the servers that declare the skills extension. */
  readonly skills: Skills<CallOptions>;
  /** The config's `composites:`, listed in the catalog as server `composite`. */
  readonly composites: Composites;
}

/** What the parts call back into the hub that holds them. */
export interface HubCallbacks {
  emit(event: HubEvent): void;
  redact(text: string): string;
  waitForTool(
    name: string,
    options: { profile?: string; signal?: AbortSignal },
  ): Promise<CatalogTool | undefined>;
  forward(server: string, method: string, params: JsonObject, options: CallOptions): Promise<JsonObject>;
  readResource(uri: string, options: CallOptions): Promise<ReadResourceResult>;
}

/**
 * Builds the parts of a hub from its options and wires them together: the one place that knows
 * which part needs which (each part is handed callbacks, never the hub).
 */
export function assembleHub(options: HubOptions, hub: HubCallbacks): HubParts {
  const { config } = options;
  const emit = (event: HubEvent) => hub.emit(event);
  const redactor = (text: string): string => hub.redact(text);
  const router = new ServerRequestRouter(() => options.onServerRequest);
  const pinned = new PinnedTools(options.pins, (server, changes) =>
    emit({ type: "pin-changes", server, changes }),
  );
  const secrets = new SecretSet(config.secrets);
  const toolLists = hubToolLists(options.toolCache, (config.available ?? []).length > 0, redactor);
  const createUpstream = upstreamFactory(options, router, redactor);
  const perUser = new PerUserServers(
    {
      createUpstream: (server, plan, onEvent, redact) => createUpstream(server, onEvent, plan, redact),
      toolsChanged: (server, user) =>
        emit({ type: "catalog-changed", servers: [server], kinds: ["tools"], user }),
      connectionClosed: (server, user, reason) =>
        emit({ type: "user-connection-closed", server, user, reason }),
      configs: () => servers.configs(),
      reaches: (server, profile) => catalog.reaches(server, profile),
      catalogOptions: () => ({ profiles: servers.profiles, serverOrder: servers.names() }),
      revision: () => catalog.revision,
      pinned: (server, snapshot, listedAt) => pinned.filter(server, snapshot, listedAt),
      secrets,
    },
    {
      users: config.users,
      ...(options.vault === undefined ? {} : { vault: options.vault }),
      ...(options.userCredentials === undefined ? {} : { source: options.userCredentials }),
      ...(options.connectUrl === undefined ? {} : { connectUrl: options.connectUrl }),
    },
  );
  const catalog = new Catalog({
    profiles: config.profiles,
    hideUnavailable: options.hideUnavailable ?? false,
    serverOrder: config.servers.map((s) => s.name),
  });
  const composites = new Composites(catalog, config.composites);
  const servers: Servers = new Servers(config, {
    createUpstream: (server, onEvent) => createUpstream(server, onEvent),
    catalog,
    perUser,
    pinned,
    toolLists,
    redact: redactor,
    emit,
  });
  const calls = new CallPath(
    {
      catalog,
      entry: servers.entry.bind(servers),
      waitForTool: (name, o) => hub.waitForTool(name, o),
      own: servers.clientConnections,
      perUser,
      router,
      get onServerRequest() {
        return options.onServerRequest;
      },
      clientCapabilities: options.clientCapabilities,
      redactor,
      composite: (name) => composites.get(name),
    },
    options.interceptors,
    options.upstreamInterceptors,
  );
  const skills = new Skills<CallOptions>({
    catalog,
    forward: (...a) => hub.forward(...a),
    readResource: (uri, o) => hub.readResource(uri, o),
    aboutResource: (method, params, o, target) => calls.aboutResource(method, params, o, target),
  });
  return { catalog, secrets, toolLists, servers, perUser, calls, skills, composites };
}

/**
 * How the hub makes a connection to a server. `onEvent` is where it reports: the catalog for the
 * shared one; a client session's own one (`share: false`) reports nothing, as the shared
 * connection lists the server; a signed-in user's own one (`plan`) reports to the per-user
 * servers' lists only, and uses that user's grant or token, never the hub's shared OAuth. Its
 * server requests go to the calls made on it (through `router`).
 */
function upstreamFactory(
  options: HubOptions,
  router: ServerRequestRouter,
  redactor: (text: string) => string,
) {
  return (
    server: ServerConfig,
    onEvent: ((upstream: Upstream, event: UpstreamEvent) => void) | undefined,
    plan?: UserConnectionPlan,
    redact: (text: string) => string = redactor,
  ): Upstream => {
    const credentials =
      plan === undefined
        ? { oauth: options.oauth }
        : {
            ...(plan.oauth === undefined ? {} : { oauth: plan.oauth }),
            ...(plan.bearer === undefined ? {} : { bearer: plan.bearer }),
          };
    const upstream: Upstream = new Upstream(server, {
      clientInfo: options.clientInfo ?? { name: "mcplex", version: "0.1.0" },
      onEvent: onEvent === undefined ? () => {} : (event) => onEvent(upstream, event),
      onServerRequest: () => router.handlerFor(upstream),
      redact,
      slowMs: options.slowMs,
      backoff: options.backoff,
      clientCapabilities: options.clientCapabilities,
      protocolVersion: server.protocolVersion,
      ...credentials,
    });
    return upstream;
  };
}
