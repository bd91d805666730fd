import { createClient, type RedisClientType } from "@redis/client";

/** Longest pause between two attempts to reach Redis again. */
const MAX_RECONNECT_MS = 2000;
/** A Redis command that takes longer fails: nothing waits on an unanswering Redis. */
const COMMAND_TIMEOUT_MS = 1000;

/** What a {@link RedisLink} reports: Redis lost (with why) and found again. */
export type RedisEvent = { type: "redis-down"; error: string } | { type: "redis-up" };

/**
 * The cluster's connection to Redis: reconnects on its own (backoff up to 2 s) for as long as
 * it is open; commands fail at once while Redis is out of reach (no offline queue) and after
 * 1 s without an answer, so a Redis outage never holds a request.
 */
export class RedisLink {
  readonly client: RedisClientType;
  #closed = false;
  #reported: "up" | "down" | undefined;
  #lastError = "not connected yet";

  constructor(url: string, onEvent: (event: RedisEvent) => void, onReady?: () => void) {
    this.client = createClient({
      url,
      disableOfflineQueue: true,
      commandOptions: { timeout: COMMAND_TIMEOUT_MS },
      socket: {
        connectTimeout: 2000,
        reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, MAX_RECONNECT_MS),
      },
    }) as RedisClientType;
    this.client.on("error", (error: Error) => {
      this.#lastError = error.message || error.name;
      if (this.#reported !== "down") {
        this.#reported = "down";
        onEvent({ type: "redis-down", error: this.#lastError });
      }
    });
    this.client.on("ready", () => {
      if (this.#reported === "down") onEvent({ type: "redis-up" });
      this.#reported = "up";
      onReady?.();
    });
  }

  #connecting: Promise<void> | undefined;

  /** Starts connecting; resolves when connected or when the first attempt failed (it keeps trying). */
  connect(): Promise<void> {
    this.#connecting ??= new Promise<void>((resolve) => {
      // connect() settles on success; a first failure is reported as an error event instead.
      this.client.once("error", () => resolve());
      this.client.connect().then(
        () => resolve(),
        () => resolve(),
      );
    });
    return this.#connecting;
  }

  /** Settles once the first connection attempt has (see {@link connect}); at once if none was made. */
  get firstAttempt(): Promise<void> {
    return this.#connecting ?? Promise.resolve();
  }

  /** Whether commands can be sent now. */
  get up(): boolean {
    return this.client.isReady;
  }

  /** Why Redis is out of reach (the last connection error), for /readyz. */
  get lastError(): string {
    return this.#lastError;
  }

  /** Disconnects for good; safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.client.destroy();
  }
}
