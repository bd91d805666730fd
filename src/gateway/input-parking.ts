import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { RpcError } from "../errors.js";
import { type RequestTarget, targetName } from "../hub/call-pipeline.js";
import type { CallParking } from "../interceptors/client-input.js";
import { ControllerPool, offAbort, onAbort } from "../protocol/controller-pool.js";
import { ErrorCode } from "../protocol/error-codes.js";
import {
  SERVER_REQUEST_CAPABILITIES,
  type ServerRequest,
  type ServerRequestHandler,
} from "../protocol/server-requests.js";

/** How long a call waiting for a client's input is kept before it is cancelled. */
const DEFAULT_PARK_MS = 10 * 60_000;
/**
 * Input requests that arrive within this quiet period of each other are asked together: a 2025
 * server sends its requests as separate messages with nothing to say it is done. On a loaded
 * machine 5 ms split a server's three requests into separate rounds; an input round waits for a
 * person or a model, so 20 ms more is nothing beside it.
 */
const QUIET_MS = 20;
const QUIET_MAX_MS = 200;
/** Prefix of the request states this gateway mints; others belong to upstream servers. */
const STATE_PREFIX = "mcplex1.";

type Outcome = { kind: "done"; result: Record<string, unknown> } | { kind: "error"; error: unknown };

interface Asked {
  method: string;
  params: Record<string, unknown>;
  resolve: (answer: Record<string, unknown>) => void;
  reject: (error: unknown) => void;
}

/** An upstream call in flight whose server asked for input the client has not given yet. */
class ParkedCall {
  #id: string | undefined;
  /** Rounds of input so far: each round's request state is new. */
  round = 0;
  readonly asked = new Map<string, Asked>();
  /** How the upstream call ended, once it has. */
  #outcome: Outcome | undefined;
  /** A capability the server needed and the client had not declared. */
  missingCapability: string | undefined;
  /** Who the call belongs to (see `InputParking.run`): only it may resume it. */
  principal: string | undefined;
  #keys = 0;
  /** The waiting {@link next}: told of the outcome or of input, whichever comes first. */
  #wake: ((next: Outcome | "input" | Promise<"input">) => void) | undefined;
  timer: NodeJS.Timeout | undefined;

  constructor(
    readonly method: string,
    /** What the call names: its retries must name the same. */
    readonly target: RequestTarget,
    /** Aborts the upstream call: the client's cancellation while it waits, or parking's end. */
    readonly controller: AbortController,
  ) {}

  /** The name or URI of {@link target}, read when a retry comes (most calls never park). */
  get name(): string {
    return targetName(this.target);
  }

  /** Minted when first needed: most calls never park, and random bytes are not free. */
  get id(): string {
    this.#id ??= randomBytes(12).toString("base64url");
    return this.#id;
  }

  /**
   * Follows the upstream call. Two callbacks on its promise and one promise per wait
   * ({@link next}): no race of promises, since every 2026 call to a server that may ask for
   * input passes here and almost none ever asks.
   */
  follow(call: Promise<Record<string, unknown>>): void {
    call.then(
      (result) => this.#settle({ kind: "done", result }),
      (error: unknown) => this.#settle({ kind: "error", error }),
    );
  }

  #settle(outcome: Outcome): void {
    this.#outcome = outcome;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.(outcome);
  }

  /** The handler the upstream call uses: each server request waits here for the client. */
  ask(request: ServerRequest): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.asked.set(`input_${++this.#keys}`, {
        method: request.method,
        params: request.params,
        resolve,
        reject,
      });
      const wake = this.#wake;
      this.#wake = undefined;
      wake?.(this.#input());
    });
  }

  /** Resolves when the call settles or asks for input, whichever comes first. */
  next(): Promise<Outcome | "input"> {
    if (this.asked.size > 0) return Promise.resolve("input");
    if (this.#outcome !== undefined) return Promise.resolve(this.#outcome);
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  /** "input", once the server's requests of this round have come (see {@link #quiet}). */
  async #input(): Promise<"input"> {
    await this.#quiet();
    return "input";
  }

  /**
   * Requests a server sends together belong in one input_required result: wait until
   * none has arrived for a moment (bounded), since they come as separate messages.
   */
  async #quiet(): Promise<void> {
    const started = Date.now();
    let seen = -1;
    while (seen !== this.asked.size && Date.now() - started < QUIET_MAX_MS) {
      seen = this.asked.size;
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    }
  }
}

/** Options of {@link InputParking}. */
export interface InputParkingOptions {
  /** How long a call waiting for its client's input is kept. Default 10 minutes. */
  parkMs?: number;
  /** The key request states are signed with. Default: random per process; replicas share one. */
  key?: Buffer;
  /** This replica's id, named in its request states so a retry elsewhere can be sent here. */
  replica?: string;
}

/**
 * Lets a 2026 client answer the server-to-client requests of a 2025 upstream. The
 * upstream call stays in flight while the gateway answers the client with an
 * `input_required` result; the client's retry (with `inputResponses` and the exact
 * `requestState`) delivers the answers and picks the call up again. The state is
 * HMAC-signed, so a modified one is refused.
 */
export class InputParking implements CallParking {
  readonly #key: Buffer;
  /** This replica's id, named in its states when it is one of several (see {@link InputParkingOptions}). */
  readonly #replica: string | undefined;
  readonly #parked = new Map<string, ParkedCall>();
  readonly #parkMs: number;
  /** Controllers of calls that ended without ever parking, for the next calls. */
  readonly #controllers = new ControllerPool(256);

  constructor(options: InputParkingOptions = {}) {
    this.#parkMs = options.parkMs ?? DEFAULT_PARK_MS;
    this.#key = options.key ?? randomBytes(32);
    this.#replica = options.replica;
  }

  /**
   * The replica a request state minted by this gateway (or by another replica sharing its key)
   * names as the call's owner; `undefined` when it names none (a gateway on its own). Throws
   * the same error as a retry would when the state was modified.
   */
  ownerOf(state: string): string | undefined {
    return this.#verify(state).split(".")[2];
  }

  /** How long a parked call waits for its client's input (ms). */
  get parkMs(): number {
    return this.#parkMs;
  }

  /** Calls parked now. */
  get size(): number {
    return this.#parked.size;
  }

  /** Whether a request state was minted here (else it belongs to an upstream server). */
  owns(state: unknown): state is string {
    return typeof state === "string" && state.startsWith(STATE_PREFIX);
  }

  /**
   * Runs an upstream call whose server requests must reach a 2026 client. Resolves
   * with the call's result, or with an `input_required` result when the server asks.
   * `principal` (the caller's token and profile) is the only one its retry is accepted from.
   */
  run(
    method: string,
    target: RequestTarget,
    capabilities: Record<string, unknown>,
    signal: AbortSignal,
    start: (handler: ServerRequestHandler, signal: AbortSignal) => Promise<Record<string, unknown>>,
    principal?: string,
  ): Promise<Record<string, unknown>> {
    const parked = new ParkedCall(method, target, this.#controllers.take());
    parked.principal = principal;
    const handler: ServerRequestHandler = (request) => {
      const capability = SERVER_REQUEST_CAPABILITIES.get(request.method);
      if (capability !== undefined && capabilities[capability] === undefined) {
        parked.missingCapability ??= capability;
        return Promise.reject(
          new RpcError(
            ErrorCode.MethodNotFound,
            `the client did not declare the ${capability} capability, so ${request.method} cannot be answered`,
          ),
        );
      }
      return parked.ask(request);
    };
    handler.waiting = () => this.#parked.get(parked.id) === parked;
    parked.follow(start(handler, parked.controller.signal));
    return this.#answer(parked, signal);
  }

  /** Delivers a retry's `inputResponses` to the parked call its `requestState` names. */
  async resume(
    method: string,
    name: string,
    state: string,
    responses: unknown,
    signal: AbortSignal,
    principal?: string,
  ): Promise<Record<string, unknown>> {
    const [id, round] = this.#verify(state).split(".");
    const parked = this.#parked.get(id!);
    if (parked === undefined || String(parked.round) !== round) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        "Invalid params: requestState is unknown or expired; call again without it",
        { requestState: state },
      );
    }
    if (parked.principal !== principal) {
      // Bound to who was asked: another token holding the state does not get to answer.
      throw new RpcError(
        ErrorCode.InvalidParams,
        "Invalid params: requestState was issued to another client; call again without it",
      );
    }
    if (parked.method !== method || parked.name !== name) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `Invalid params: requestState belongs to ${parked.method} ${parked.name}, not ${method} ${name}`,
      );
    }
    if (
      responses !== undefined &&
      (typeof responses !== "object" || responses === null || Array.isArray(responses))
    ) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        "Invalid params: inputResponses must be an object keyed by the input request keys",
      );
    }
    for (const [key, answer] of Object.entries((responses ?? {}) as Record<string, unknown>)) {
      const asked = parked.asked.get(key);
      if (asked === undefined) continue; // extra keys are ignored
      if (typeof answer !== "object" || answer === null || Array.isArray(answer)) {
        throw new RpcError(
          ErrorCode.InvalidParams,
          `Invalid params: inputResponses.${key} must be an object`,
        );
      }
      parked.asked.delete(key);
      asked.resolve(answer as Record<string, unknown>);
    }
    this.#unpark(parked);
    return this.#answer(parked, signal);
  }

  async #answer(parked: ParkedCall, signal: AbortSignal): Promise<Record<string, unknown>> {
    // While the client's request is open, its cancellation is the call's cancellation.
    const abort = () => parked.controller.abort(signal.reason);
    onAbort(signal, abort);
    let next: Outcome | "input";
    try {
      next = await parked.next();
    } finally {
      offAbort(signal, abort);
    }
    if (next === "input") return this.#park(parked);
    // The call is over. One that never parked has no timer that could abort its controller later.
    if (parked.round === 0) this.#controllers.give(parked.controller);
    const missing = parked.missingCapability;
    if (missing !== undefined) {
      // What the server made of the refusal matters less than why: the client lacks a capability.
      throw new RpcError(
        ErrorCode.MissingClientCapability,
        `the server needs the client's ${missing} capability for this call`,
        {
          requiredCapabilities: { [missing]: {} },
        },
      );
    }
    if (next.kind === "error") throw next.error;
    return next.result;
  }

  #park(parked: ParkedCall): Record<string, unknown> {
    this.#parked.set(parked.id, parked);
    parked.timer = setTimeout(() => {
      this.#unpark(parked);
      parked.controller.abort(new Error("the client did not answer the input request in time"));
      for (const asked of parked.asked.values())
        asked.reject(new RpcError(ErrorCode.InternalError, "input request expired"));
    }, this.#parkMs);
    parked.timer.unref();
    const inputRequests: Record<string, { method: string; params: Record<string, unknown> }> = {};
    for (const [key, asked] of parked.asked)
      inputRequests[key] = { method: asked.method, params: asked.params };
    parked.round++;
    return {
      resultType: "input_required",
      inputRequests,
      requestState: this.#sign(
        `${parked.id}.${parked.round}${this.#replica === undefined ? "" : `.${this.#replica}`}`,
      ),
    };
  }

  #unpark(parked: ParkedCall): void {
    clearTimeout(parked.timer);
    this.#parked.delete(parked.id);
  }

  #sign(id: string): string {
    return `${STATE_PREFIX}${id}.${createHmac("sha256", this.#key).update(id).digest("base64url")}`;
  }

  #verify(state: string): string {
    const body = state.slice(STATE_PREFIX.length);
    const dot = body.lastIndexOf(".");
    const id = dot === -1 ? undefined : body.slice(0, dot);
    const mac = dot === -1 ? undefined : body.slice(dot + 1);
    const expected = id === undefined ? undefined : createHmac("sha256", this.#key).update(id).digest();
    const given = mac === undefined ? undefined : Buffer.from(mac, "base64url");
    if (
      expected === undefined ||
      given === undefined ||
      given.length !== expected.length ||
      !timingSafeEqual(given, expected)
    ) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        "Invalid params: requestState was modified or was not issued by this gateway",
      );
    }
    return id!;
  }

  /** Cancels every parked call (gateway shutdown). */
  close(): void {
    for (const parked of this.#parked.values()) {
      this.#unpark(parked);
      parked.controller.abort(new Error("gateway closing"));
    }
  }
}
