import type { Readable, Writable } from "node:stream";
import type { CatalogMode } from "../catalog-modes/catalog-mode.js";
import type { ClientSession } from "../gateway/client-session.js";
import type { Gateway } from "../gateway/gateway.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { stringifyMessage } from "../protocol/messages.js";
import { LineSplitter, takeOverPipe } from "../protocol/newline-framing.js";
import { parseErrorAnswer } from "../protocol/wire-error.js";
import { WriteQueue } from "../protocol/write-queue.js";

/** Options of {@link serveGatewayStdio}. */
export interface StdioFrontOptions {
  /**
   * Where requests come from. Default: this process's standard input, which is read below
   * Node's streams when it is a pipe or a socket (see `takeOverPipe`): nothing else may read
   * `process.stdin` then.
   */
  input?: Readable;
  output?: Writable;
  profile?: string;
  /** How the client sees the tools (`all`, `search`, `code`); default: its profile's, else the gateway's. */
  mode?: CatalogMode;
  /** Largest accepted message in bytes. Default 4 MiB. */
  maxMessageBytes?: number;
  /**
   * Bytes of requests in flight (read, not yet answered), or of answers the client has not
   * read yet, past which input is no longer read until they are back under half: the client's writes then wait, as its
   * pipe fills. Default 16 MiB, half an upstream's write queue, so that one client alone
   * is not refused for a full queue.
   */
  maxInFlightBytes?: number;
}

/**
 * Serves the gateway over stdio (newline-delimited JSON-RPC) for clients that spawn
 * their servers. Resolves when the input ends; the session is then closed.
 */
export function serveGatewayStdio(
  gateway: Gateway,
  options: StdioFrontOptions = {},
): { session: ClientSession; done: Promise<void> } {
  const output = options.output ?? process.stdout;
  const max = options.maxMessageBytes ?? 4 * 1024 * 1024;
  const maxInFlight = options.maxInFlightBytes ?? 16 * 1024 * 1024;
  // Answers are never refused; a client that does not read them stops being read instead.
  const answers = new WriteQueue(output, { maxQueuedBytes: Number.POSITIVE_INFINITY });
  const write = (text: string) => void answers.push(text);
  // Requests read but not answered, by id, with their size: memory grows with them.
  const inFlight = new Map<unknown, number>();
  let inFlightBytes = 0;
  let paused = false;
  const resumeIfLow = () => {
    if (paused && inFlightBytes <= maxInFlight / 2 && answers.backlog <= maxInFlight / 2) {
      paused = false;
      input.resume();
    }
  };
  output.on("drain", resumeIfLow);
  const session = gateway.openSession(
    {
      send(message) {
        const m = message as { id?: unknown; method?: unknown };
        if (m.id !== undefined && m.method === undefined) {
          const size = inFlight.get(m.id);
          if (size !== undefined) {
            inFlight.delete(m.id);
            inFlightBytes -= size;
            resumeIfLow();
          }
        }
        write(stringifyMessage(message));
      },
      close() {},
    },
    { profile: options.profile, mode: options.mode, front: "stdio" },
  );

  const onLine = (line: string) => {
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      write(JSON.stringify(parseErrorAnswer(error)));
      return;
    }
    const m = message as { id?: unknown; method?: unknown };
    if (typeof m === "object" && m !== null && m.id !== undefined && typeof m.method === "string") {
      inFlightBytes += line.length - (inFlight.get(m.id) ?? 0);
      inFlight.set(m.id, line.length);
      if (!paused && (inFlightBytes > maxInFlight || answers.backlog > maxInFlight)) {
        paused = true;
        input.pause();
      }
    }
    session.receive(message);
  };
  const lines = new LineSplitter(onLine, max, () =>
    write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: ErrorCode.InvalidRequest,
          message: `Invalid Request: message larger than ${max} bytes`,
        },
      }),
    ),
  );
  // Standard input that is a pipe is read below the streams; anything else as a stream.
  const pipe =
    options.input === undefined
      ? takeOverPipe(process.stdin, (buffer, length) => lines.pushBytes(buffer, length))
      : undefined;
  const input = options.input ?? pipe ?? process.stdin;
  if (pipe === undefined)
    input.on("data", (chunk: Buffer | string) =>
      typeof chunk === "string" ? lines.push(chunk) : lines.pushBytes(chunk, chunk.length),
    );
  const done = new Promise<void>((resolve) => {
    let ending = false;
    // End of input: the client has said all it will, but answers still owed go out first.
    const end = () => {
      if (ending) return;
      ending = true;
      void session.idle().then(() => {
        session.close();
        resolve();
      });
    };
    input.once("end", end);
    input.once("close", end);
    // A read that fails (a reset socket) ends the input too; a stream given in reports its own.
    pipe?.once("error", end);
    // A client that closed its end of our output (EPIPE) can read no answer: it has gone, as at
    // the end of input. Not reading on spares the calls it can no longer hear of.
    output.on("error", () => {
      input.pause();
      end();
    });
  });
  return { session, done };
}
