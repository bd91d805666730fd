import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { ConnectRequiredError } from "../credentials/user-credentials.js";
import { RpcError } from "../errors.js";
import {
  type CallRequest,
  type Handler,
  type Interceptor,
  interceptor,
  type JsonObject,
} from "../hub/call-pipeline.js";
import { toolErrorCause } from "../hub/tool-error-cause.js";
import { deadlineSignal } from "../protocol/deadline-signal.js";
import { ErrorCode } from "../protocol/error-codes.js";

/** How long a call waits for its user to connect after they accepted to (the connect link's life). */
const CONNECT_WAIT_MS = 10 * 60_000;
const STATE_PREFIX = "connect~";
/** Between two progress notifications while a call waits for its user to connect. */
const PROGRESS_MS = 10_000;
const INPUT_KEY = "connect";

/** Options of {@link connectPrompt}. */
export interface ConnectPromptOptions {
  /**
   * Resolves once the user `error` was made for has connected its server (the connect page's
   * callback or form stored their credentials): `connectWaiter` of src/credentials/ gives one.
   */
  waitConnected: (error: ConnectRequiredError, signal: AbortSignal) => Promise<void>;
  /** How long to wait for the connect after the user accepted. Default 10 minutes. */
  waitMs?: number;
  /** Between two progress notifications to a waiting call that asked for progress. Default 10 s. */
  progressMs?: number;
  /**
   * Signs the `requestState` of a 2026 client's `input_required` (every replica's must be the
   * same, e.g. derived from the cluster secret). Default: a key made at start.
   */
  stateKey?: Buffer;
}

/**
 * The interceptor (on a gateway) that asks the user to connect a per-user server, where a tool
 * call failed with `CONNECT_REQUIRED` (the user has no credentials for it yet):
 * - a 2025 session whose client declared `elicitation.url` gets `elicitation/create` in URL mode
 *   (the connect link); once the user accepted and the connect is done, the layer sends
 *   `notifications/elicitation/complete` and the call goes on, answered as if nothing happened;
 * - a 2026 client that declared it gets the same request through `input_required`; its retry
 *   (with the answer and the signed `requestState`) waits for the connect and goes on;
 * - any other client gets the tool error as the route made it: its text carries the link and
 *   says to call again once connected.
 */
export function connectPrompt(options: ConnectPromptOptions): Interceptor {
  const key = options.stateKey ?? randomBytes(32);
  const waitMs = options.waitMs ?? CONNECT_WAIT_MS;
  const progressMs = options.progressMs ?? PROGRESS_MS;
  const sign = (body: string) => createHmac("sha256", key).update(body).digest().subarray(0, 16);

  /** Calls again once the user connected (or the wait ended): the answer, or the tool error again. */
  const afterConnect = async (request: CallRequest, next: Handler, waiting: Promise<void>) => {
    // Signing in takes longer than a client's usual request timeout: a client that asked for
    // progress hears the call is alive (the SDK's clients reset their timeout on it).
    const token = (request.params._meta as { progressToken?: unknown } | undefined)?.progressToken;
    let beats = 0;
    const beat =
      token === undefined
        ? undefined
        : setInterval(() => {
            request.context.notify("notifications/progress", {
              progressToken: token,
              progress: ++beats,
              message: "waiting for you to connect your account",
            });
          }, progressMs);
    beat?.unref();
    try {
      await waiting.catch(() => {});
    } finally {
      clearInterval(beat);
    }
    request.context.signal.throwIfAborted();
    return next(request);
  };

  /** Starts waiting for the connect of `error`'s user, bounded; `stop` ends the wait. */
  const waitFor = (request: CallRequest, error: ConnectRequiredError) => {
    const stop = new AbortController();
    const deadline = deadlineSignal(waitMs, request.context.signal, stop.signal);
    const waiting = options.waitConnected(error, deadline.signal);
    waiting.catch(() => {}).finally(deadline.clear);
    return { waiting, stop: () => stop.abort() };
  };

  // It reads the typed error behind a tool error, which a result kept as text (RawJson) never is.
  return interceptor({ needs: "raw" }, (next) => async (request) => {
    if (request.method !== "tools/call") return next(request);
    const ctx = request.context;
    const resumed = ctx.stateless ? resumeOf(request) : undefined;
    const current = resumed === undefined ? request : { ...request, params: resumed.params };
    const result = await next(current);
    const error = connectRequired(result);
    if (error === undefined) return result;

    if (resumed !== undefined) {
      if (!resumed.accepted) return result;
      // The user may have connected before this retry came: wait only if they have not yet.
      const { waiting, stop } = waitFor(current, error);
      const again = await next(current);
      if (connectRequired(again) === undefined) {
        stop();
        return again;
      }
      return afterConnect(current, next, waiting);
    }

    if (!acceptsUrl(ctx.clientCapabilities)) return result;
    const elicitationId = randomUUID();
    const params = {
      mode: "url",
      elicitationId,
      url: error.url,
      message: `${error.server ?? "This server"} needs your own account: open the link to connect it, then come back.`,
    };

    if (!ctx.stateless) {
      if (ctx.requestClient === undefined) return result;
      // Waiting from before the question: a quick user may finish before the answer comes.
      const { waiting, stop } = waitFor(request, error);
      const answer = await ctx.requestClient("elicitation/create", params, ctx.signal).catch(() => undefined);
      if (answer?.action !== "accept") {
        stop();
        return result;
      }
      const done = await afterConnect(request, next, waiting);
      ctx.notify("notifications/elicitation/complete", { elicitationId });
      return done;
    }

    const body = Buffer.from(
      JSON.stringify({
        i: elicitationId,
        k: ctx.identity?.key ?? "",
        t: request.params.name,
        e: Date.now() + waitMs,
      }),
    ).toString("base64url");
    return {
      resultType: "input_required",
      inputRequests: { [INPUT_KEY]: { method: "elicitation/create", params } },
      requestState: `${STATE_PREFIX}${body}.${sign(body).toString("base64url")}`,
    };
  });

  /** A 2026 retry of this layer's `input_required`: the params without its state, and the user's answer. */
  function resumeOf(request: CallRequest): { params: JsonObject; accepted: boolean } | undefined {
    const { requestState, inputResponses, ...params } = request.params;
    if (typeof requestState !== "string" || !requestState.startsWith(STATE_PREFIX)) return undefined;
    const [body = "", mac = ""] = requestState.slice(STATE_PREFIX.length).split(".");
    const given = Buffer.from(mac, "base64url");
    const expected = sign(body);
    let state: { k?: string; t?: string; e?: number } | undefined;
    if (given.length === expected.length && timingSafeEqual(given, expected)) {
      state = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as typeof state;
    }
    if (
      state === undefined ||
      state.k !== (request.context.identity?.key ?? "") ||
      state.t !== request.params.name ||
      !(Number(state.e) > Date.now())
    ) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        "Invalid params: this requestState was not made for this call (or has expired); call again without it",
      );
    }
    const answer = (inputResponses as Record<string, { action?: unknown }> | undefined)?.[INPUT_KEY];
    return { params, accepted: answer?.action === "accept" };
  }
}

/** The `CONNECT_REQUIRED` error a tool's result was made from, if it was. */
function connectRequired(result: JsonObject): ConnectRequiredError | undefined {
  const cause = toolErrorCause(result);
  return cause instanceof ConnectRequiredError ? cause : undefined;
}

/** Whether the client takes URL-mode elicitation (2025-11-25 `elicitation.url`). */
function acceptsUrl(capabilities: Record<string, unknown>): boolean {
  const elicitation = capabilities.elicitation;
  return typeof elicitation === "object" && elicitation !== null && "url" in elicitation;
}
