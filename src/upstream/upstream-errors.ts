import { McplexError, UpstreamUnavailableError } from "../errors.js";
import { redactError } from "./error-redaction.js";

/** The error a call gets while a server is not ready: its state, why, and the next retry. */
export function unavailable(
  server: string,
  state: string,
  cause: McplexError | undefined,
  retryAt: number | undefined,
): UpstreamUnavailableError {
  const when =
    retryAt === undefined ? "" : `; next retry in ${Math.max(0, Math.ceil((retryAt - Date.now()) / 1000))} s`;
  const reason = cause === undefined ? "" : `: ${cause.message.split("\n")[0]}`;
  return new UpstreamUnavailableError(
    `server "${server}" is ${state}${reason}${when}`,
    {
      server,
      ...(retryAt === undefined ? {} : { retryAt }),
      ...(cause?.hint === undefined ? {} : { hint: cause.hint }),
    },
    cause === undefined ? undefined : { cause },
  );
}

/**
 * The error with the config's secrets taken out of its message, stack, hint, data and causes:
 * messages quote the server's stderr, which may print a token it was given. The copy keeps
 * the error's class, code and fields (see {@link redactError}), and gets `server` when it had none.
 */
export function redacted<E extends McplexError>(
  error: E,
  server: string,
  redact: ((text: string) => string) | undefined,
): E {
  if (redact === undefined) return error;
  const copy = redactError(error, redact) as E;
  if (copy !== error && copy.server === undefined)
    Object.defineProperty(copy, "server", { value: server, enumerable: true });
  return copy;
}

/** The error of a message refused because too much already waits for the server to read. */
export function queueFull(
  server: string,
  transport: string,
  backlog: number,
  size: number,
  limit: number,
): McplexError {
  const mib = (bytes: number) => `${Math.round(bytes / 1048576)} MiB`;
  return new McplexError(
    "UPSTREAM_QUEUE_FULL",
    `${server}: write queue full: ${mib(backlog)} already wait for the server to read, and this ${mib(size)} message would pass the ${mib(limit)} limit; retry when calls in flight have finished`,
    {
      server,
      transport,
      retryable: true,
      hint: "retry when the calls in flight to this server have finished",
    },
  );
}
