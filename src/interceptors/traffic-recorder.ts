import type { McplexConfig, RecordConfig } from "../config/types.js";
import { McplexError, RpcError } from "../errors.js";
import type { Interceptor } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import type { RecordedError, RecordedLists, RecordingLine } from "../recording/recording-format.js";
import { RecordingWriter } from "../recording/recording-writer.js";

/** A server's recording while it runs. */
interface Track {
  writer: RecordingWriter;
  /** Writes a line; a failure to write ends this server's recording (see `onError`). */
  write: (line: RecordingLine) => void;
  nextId: number;
  /** Requests in flight: id to start time (performance.now()). */
  inFlight: Map<number, number>;
  lists?: string;
  /** Whether the current connection's handshake is written (lists come after it). */
  introduced: boolean;
}

/** Options of a {@link TrafficRecorder}. */
export interface TrafficRecorderOptions {
  /** Where and how each server is recorded; `undefined` for a server not recorded. */
  recordOf: (server: string) => RecordConfig | undefined;
  /** The config's secrets: hidden before anything reaches the disk. */
  secrets: readonly string[];
  /**
   * A server's recording could not be written (disk full, directory not writable): its recording
   * stops, the calls go on.
   */
  onError?: (server: string, error: Error) => void;
}

/**
 * Records servers' traffic as it passes through the hub, in the format of
 * docs/recording-format.md: the requests the hub sends for calls (an upstream {@link Interceptor},
 * so it sees what the server got after the other layers, with progress and cancellation), their
 * results and errors, the server's notifications (hub events), and how it introduced itself and
 * what it listed (on each start and list change).
 *
 * @example
 * const recorder = new TrafficRecorder({ recordOf: () => ({ dir: "rec", redact: [] }), secrets: [] });
 * const hub = new Hub({ config, upstreamInterceptors: [recorder.interceptor] });
 * recorder.attach(hub);
 */
export class TrafficRecorder {
  readonly #options: TrafficRecorderOptions;
  readonly #tracks = new Map<string, Track | null>();
  #detach: (() => void) | undefined;

  constructor(options: TrafficRecorderOptions) {
    this.#options = options;
  }

  /** The layer to give the hub (`HubOptions.upstreamInterceptors`). */
  readonly interceptor: Interceptor = (next) => async (call) => {
    const server = call.target?.server;
    const track = server === undefined ? undefined : this.#track(server);
    if (track === undefined) return next(call);
    const id = track.nextId++;
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    track.write({
      type: "request",
      id,
      at: new Date().toISOString(),
      method: call.method,
      params: call.params,
    });
    track.inFlight.set(id, started);
    const { onProgress, signal } = call.callOptions;
    const onAbort = () => track.write({ type: "cancelled", id, ms: ms(), direction: "client" });
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const result = await next({
        ...call,
        callOptions: {
          ...call.callOptions,
          onProgress: (progress) => {
            // The token is the connection's own: a replay sends the live request's.
            const {
              progress: done,
              total,
              message,
            } = progress as { progress: number; total?: number; message?: string };
            track.write({
              type: "progress",
              id,
              ms: ms(),
              progress: done,
              ...(total === undefined ? {} : { total }),
              ...(message === undefined ? {} : { message }),
            });
            onProgress?.(progress);
          },
        },
      });
      track.write({ type: "result", id, ms: ms(), result });
      return result;
    } catch (error) {
      if (!signal?.aborted) track.write({ type: "error", id, ms: ms(), error: recordedError(error) });
      throw error;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      track.inFlight.delete(id);
    }
  };

  /**
   * Listens to the hub: handshakes and lists when a server becomes ready or lists anew, and the
   * server's notifications (tied to the request in flight when there is exactly one). Returns
   * the detach function.
   */
  attach(hub: Hub): () => void {
    const off = hub.on((event) => {
      switch (event.type) {
        case "server-state": {
          const track = this.#track(event.server);
          if (track !== undefined && event.state !== "ready") track.introduced = false;
          else this.#handshake(hub, event.server);
          return;
        }
        case "catalog-changed":
          for (const server of event.servers) this.#lists(hub, server);
          return;
        case "notification": {
          const track = this.#track(event.server);
          if (track === undefined) return;
          const only = track.inFlight.size === 1 ? [...track.inFlight][0] : undefined;
          track.write({
            type: "notification",
            at: new Date().toISOString(),
            direction: "server",
            method: event.method,
            ...(event.params === undefined ? {} : { params: event.params }),
            ...(only === undefined ? {} : { id: only[0], ms: Math.round(performance.now() - only[1]) }),
          });
          return;
        }
      }
    });
    // Servers already up (a recorder attached late) are written at once.
    for (const status of hub.servers()) if (status.state === "ready") this.#handshake(hub, status.name);
    this.#detach = off;
    return off;
  }

  /** Stops listening and closes every file; safe to call twice. */
  close(): void {
    this.#detach?.();
    for (const track of this.#tracks.values()) track?.writer.close();
    this.#tracks.clear();
  }

  #handshake(hub: Hub, server: string): void {
    const track = this.#track(server);
    const details = hub.serverDetails(server);
    if (track === undefined || details === undefined || track.introduced) return;
    const { tools: _, resources: __, resourceTemplates: ___, prompts: ____, ...handshake } = details;
    track.write({ type: "server", at: new Date().toISOString(), ...(handshake as object) });
    track.introduced = true;
    this.#lists(hub, server);
  }

  #lists(hub: Hub, server: string): void {
    const track = this.#track(server);
    const details = hub.serverDetails(server);
    if (track === undefined || details === undefined) return;
    if (!track.introduced) {
      this.#handshake(hub, server);
      return;
    }
    const lists = {
      tools: details.tools,
      resources: details.resources,
      resourceTemplates: details.resourceTemplates,
      prompts: details.prompts,
    } as unknown as RecordedLists;
    const text = JSON.stringify(lists);
    if (text === track.lists) return;
    track.lists = text;
    track.write({ type: "lists", at: new Date().toISOString(), ...lists });
  }

  #track(server: string): Track | undefined {
    const known = this.#tracks.get(server);
    if (known !== undefined) return known ?? undefined;
    const record = this.#options.recordOf(server);
    if (record === undefined) {
      this.#tracks.set(server, null);
      return undefined;
    }
    const writer = new RecordingWriter({
      dir: record.dir,
      server,
      secrets: this.#options.secrets,
      redactKeys: record.redact,
      ...(record.maxBytes === undefined ? {} : { maxBytes: record.maxBytes }),
      ...(record.maxFiles === undefined ? {} : { maxFiles: record.maxFiles }),
    });
    const track: Track = {
      writer,
      write: (line) => {
        try {
          writer.write(line);
        } catch (error) {
          this.#tracks.set(server, null);
          writer.close();
          this.#options.onError?.(server, error as Error);
        }
      },
      nextId: 1,
      inFlight: new Map(),
      introduced: false,
    };
    this.#tracks.set(server, track);
    return track;
  }
}

/**
 * The recorder of a config's servers that have `record:` (a replayed server is never recorded:
 * it would be its own recording).
 */
export function recorderFor(
  config: McplexConfig,
  onError?: (server: string, error: Error) => void,
): TrafficRecorder {
  return new TrafficRecorder({
    recordOf: (name) => {
      const server = config.servers.find((s) => s.name === name);
      return server?.transport === "replay" ? undefined : server?.record;
    },
    secrets: config.secrets,
    ...(onError === undefined ? {} : { onError }),
  });
}

/** An error as a recording keeps it: the wire error as it came, or a local failure's code and message. */
function recordedError(error: unknown): RecordedError {
  if (error instanceof RpcError) return error.toJSON();
  if (error instanceof McplexError) return { message: error.message, local: error.code };
  return { message: error instanceof Error ? error.message : String(error) };
}
