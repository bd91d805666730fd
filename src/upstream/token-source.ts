import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import type { TokenSource } from "../config/types.js";
import { McplexError } from "../errors.js";

/** How long a `command:` token source may run. */
const COMMAND_TIMEOUT_MS = 30_000;
/** The most a token file or command output may hold: a JWT is a few kilobytes. */
const MAX_TOKEN_BYTES = 64 * 1024;

/** What a failed read is reported against: the server, and the config path of the source. */
export interface TokenSourceLabel {
  server: string;
  /** Config path of the source, like `servers.api.oauth.assertion`. */
  path: string;
}

/**
 * Reads the token `source` names, now: a file is read again on each call (a projected
 * service-account token rotates under the same path), a command run again. The result is the
 * text trimmed of surrounding white space; it is data, never interpreted. A source that
 * yields nothing fails with `OAUTH_ASSERTION_UNAVAILABLE` naming the file or command and the
 * config path, and never quoting what was read.
 *
 * @example
 * const jwt = await readTokenSource({ file: "/var/run/secrets/tokens/mcp" }, { server: "api", path: "servers.api.oauth.assertion" });
 */
export async function readTokenSource(
  source: TokenSource,
  label: TokenSourceLabel,
  signal?: AbortSignal,
): Promise<string> {
  if ("value" in source) return source.value;
  const text =
    "file" in source
      ? await readTokenFile(source.file, label, signal)
      : await runTokenCommand(source.command, label, signal);
  const token = text.trim();
  if (token === "") {
    const where =
      "file" in source ? `the file ${source.file} is empty` : `${source.command[0]} printed nothing`;
    throw unavailable(
      label,
      where,
      "file" in source ? "the platform has not written the token yet" : undefined,
    );
  }
  return token;
}

async function readTokenFile(file: string, label: TokenSourceLabel, signal?: AbortSignal): Promise<string> {
  try {
    const bytes = await readFile(file, signal === undefined ? {} : { signal });
    if (bytes.length > MAX_TOKEN_BYTES)
      throw unavailable(label, `${file} is over ${MAX_TOKEN_BYTES} bytes; it is not a token`);
    return bytes.toString("utf8");
  } catch (error) {
    if (error instanceof McplexError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    const hint =
      code === "ENOENT"
        ? `check ${label.path}.file: is the token projected into this container (a Kubernetes projected volume) at that path?`
        : undefined;
    throw unavailable(label, `cannot read ${file} (${code})`, hint, error);
  }
}

function runTokenCommand(command: string[], label: TokenSourceLabel, signal?: AbortSignal): Promise<string> {
  const [program = "", ...args] = command;
  return new Promise((resolve, reject) => {
    execFile(
      program,
      args,
      {
        timeout: COMMAND_TIMEOUT_MS,
        maxBuffer: MAX_TOKEN_BYTES,
        windowsHide: true,
        ...(signal === undefined ? {} : { signal }),
      },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve(stdout);
          return;
        }
        const failure = error as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
        const how =
          failure.code === "ENOENT"
            ? "was not found"
            : failure.killed === true
              ? `did not finish within ${COMMAND_TIMEOUT_MS / 1000} s`
              : typeof failure.code === "number"
                ? `exited with code ${failure.code}`
                : `failed (${failure.code ?? failure.message})`;
        // stderr says why; stdout may be (part of) a token and is never quoted.
        const why = redactTokens(String(stderr).trim()).slice(0, 300);
        reject(unavailable(label, `${program} ${how}${why === "" ? "" : `: ${why}`}`, undefined, error));
      },
    );
  });
}

function unavailable(label: TokenSourceLabel, what: string, hint?: string, cause?: unknown): McplexError {
  return new McplexError(
    "OAUTH_ASSERTION_UNAVAILABLE",
    `${label.server}: no token to present (${label.path}): ${what}`,
    {
      server: label.server,
      path: label.path,
      hint: hint ?? `fix ${label.path}, or what it points to`,
      retryable: true,
    },
    cause === undefined ? undefined : { cause },
  );
}

/** `text` with anything shaped like a JWT (or a long opaque token) replaced by `[token]`. */
export function redactTokens(text: string, ...known: string[]): string {
  let out = text;
  for (const token of known) if (token !== "") out = out.split(token).join("[token]");
  return out.replace(/eyJ[\w-]*\.[\w-]*\.[\w-]*/g, "[token]").replace(/[\w-]{80,}/g, "[token]");
}
