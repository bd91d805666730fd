import type { McplexConfig } from "../config/types.js";
import type { CredentialVault, UserCredentialSource, UserRef } from "../credentials/user-credentials.js";
import type { SkillLoadSettings } from "../ext/skills/skill-reader.js";
import type { ToolPins } from "../pins/tool-pins.js";
import type { Implementation } from "../protocol/rev2026.js";
import type { ServerRequestHandler } from "../protocol/server-requests.js";
import type { ServerDetails, ServerEvent, ServerStatus } from "../servers/server-types.js";
import type { BackoffOptions } from "../upstream/backoff.js";
import type { OAuthHost } from "../upstream/oauth.js";
import type { CallOptions, Interceptor } from "./call-pipeline.js";

/** Options of a {@link Hub}. */
export interface HubOptions {
  config: McplexConfig;
  /** How mcplex introduces itself to servers. */
  clientInfo?: Implementation;
  /** Answers server-to-client requests (sampling, elicitation, roots) for every call without its own handler. */
  onServerRequest?: ServerRequestHandler;
  /** Calls slower than this (ms) are counted and reported as `slow-call` events. Default 5000. */
  slowMs?: number;
  /** Leave tools of unavailable servers out of listings instead of marking them unavailable. */
  hideUnavailable?: boolean;
  /** Reconnect timing (default 1 s doubling to 30 s, with jitter). */
  backoff?: BackoffOptions;
  /**
   * Capabilities declared to servers. Default: sampling, elicitation and roots when
   * `onServerRequest` is given, none otherwise. A gateway declares them all and answers
   * per call.
   */
  clientCapabilities?: Record<string, unknown>;
  /**
   * Where tokens of servers configured with `oauth` are kept (default: memory), and how to
   * ask the user for a new authorization (default: none, so such a server fails with a hint).
   */
  oauth?: OAuthHost;
  /**
   * Layers on the path of every call, whoever makes it (see {@link Interceptor}): the library's
   * `hub.callTool`, the CLI, the agent loop, and the requests of a gateway's clients on any
   * front (outermost there, around the gateway's own layers). The first is outermost. More
   * can be added with `hub.use`.
   */
  interceptors?: readonly Interceptor[];
  /**
   * Layers around each request the hub sends a server, input_required retries included: the
   * request's `params` are the server's own (original names), `target.server` names it, and
   * `callOptions` carry the request's timeout. Tracing and recording sit here.
   */
  upstreamInterceptors?: readonly Interceptor[];
  /**
   * The directory where servers' last-seen tool lists are kept between runs (`DIR/tools/NAME.json`,
   * see `ToolListStore`): `available:` servers show theirs while stopped, `--simulate` stands in
   * with them. Default: `defaultCacheDir()` when the config has `available:` servers, else memory
   * only; `false`: memory only.
   */
  toolCache?: string | false;
  /**
   * The approved tools of servers with `pin:` (see `ToolPins`, `lockFilePath`): their tools that
   * differ from those approved are held out of the catalog by their policy, reported by
   * `hub.pinChanges()` and `pin-changes` events, and let in by `hub.trustTools()`. Without it,
   * `pin:` does nothing (the CLI opens the lock file beside the config).
   */
  pins?: ToolPins;
  /**
   * Gives each signed-in user's connection plan for servers whose `credentials` are not
   * `shared` (per-user OAuth, token exchange, a stdio server's values). Without it, plans come
   * from {@link vault} alone: the user's `${user:NAME}` values.
   */
  userCredentials?: UserCredentialSource;
  /** Per-(user, server) credentials of per-user servers. Default: in memory. */
  vault?: CredentialVault;
  /**
   * The page where `user` connects `server` (`/connect/<server>`): a call of a user who has not
   * connected it is refused with a `ConnectRequiredError` carrying this URL.
   */
  connectUrl?: (user: UserRef, server: string) => string;
}

/** Events the hub emits (those of its servers); a discriminated union on `type`. */
export type HubEvent = ServerEvent | DecisionEvent;

/**
 * A layer decided something about a call (a policy rule held, a guardrail acted, a quota
 * refused): what, never
 * who asked, for counts such as the gateway's metrics. The request's own record is its
 * `RequestContext.decisions`.
 */
export interface DecisionEvent {
  type: "decision";
  by: "policy" | "guardrail" | "quota";
  /** The rule's or the guardrail's name. */
  name: string;
  effect: string;
}

export type { CallOptions, ServerDetails, ServerStatus };

/** Options of `hub.loadSkill`: a call's options, and whether a skill that cannot be verified may load. */
export interface LoadSkillOptions extends CallOptions, SkillLoadSettings {}
