/**
 * One typed error for everything that can go wrong talking to a chat-completions API,
 * normalised from the error shapes providers really send.
 */
import { McplexError } from "../errors.js";

/** What kind of failure an {@link LlmError} is. */
export type LlmErrorKind =
  /** The server answered with a non-2xx status. */
  | "http"
  /** The request never got an answer (DNS, refused connection, reset). */
  | "network"
  /** The stream carried an `error` object (`data: {"error":...}`). */
  | "stream"
  /** The stream ended before the response was complete. */
  | "truncated"
  /** The body could not be parsed as the chat-completions format. */
  | "parse"
  /** The model hit its output limit inside a tool call (`finish_reason: "length"`). */
  | "length";

/** Fields of an {@link LlmError} beyond the message. */
export interface LlmErrorFields {
  kind: LlmErrorKind;
  status?: number;
  /** The provider's own message, as sent. */
  providerMessage?: string;
  providerCode?: string | number;
  providerType?: string;
  /** The request parameter the provider blamed, when it said. */
  param?: string;
  /** From `Retry-After`, when the provider sent one. */
  retryAfterMs?: number;
  hint?: string;
  retryable?: boolean;
  /** The start of the raw error body, for diagnosis. */
  body?: string;
}

/**
 * A failed call to a chat-completions API.
 *
 * @example
 * if (event.type === "error" && event.error instanceof LlmError && event.error.status === 401) askForKey();
 */
export class LlmError extends McplexError {
  readonly kind: LlmErrorKind;
  readonly status?: number;
  readonly providerMessage?: string;
  readonly providerCode?: string | number;
  readonly providerType?: string;
  readonly param?: string;
  readonly retryAfterMs?: number;
  readonly body?: string;

  constructor(message: string, fields: LlmErrorFields, options?: { cause?: unknown }) {
    const code = fields.kind === "http" || fields.kind === "network" ? "TRANSPORT_ERROR" : "PROTOCOL_ERROR";
    const hint = fields.hint ?? defaultHint(fields);
    super(
      code,
      message,
      { transport: "chat-completions", retryable: fields.retryable ?? isRetryableStatus(fields), hint },
      options,
    );
    this.kind = fields.kind;
    if (fields.status !== undefined) this.status = fields.status;
    if (fields.providerMessage !== undefined) this.providerMessage = fields.providerMessage;
    if (fields.providerCode !== undefined) this.providerCode = fields.providerCode;
    if (fields.providerType !== undefined) this.providerType = fields.providerType;
    if (fields.param !== undefined) this.param = fields.param;
    if (fields.retryAfterMs !== undefined) this.retryAfterMs = fields.retryAfterMs;
    if (fields.body !== undefined) this.body = fields.body;
  }
}

function isRetryableStatus(fields: LlmErrorFields): boolean {
  if (fields.kind === "network") return true;
  return fields.status === 429 || (fields.status !== undefined && fields.status >= 500);
}

function defaultHint(fields: LlmErrorFields): string | undefined {
  const { status, kind } = fields;
  if (kind === "network") return "Check that the base URL is right and the server is running.";
  if (kind === "truncated") return "The connection dropped mid-answer; try again.";
  if (kind === "length") return "The model ran out of output tokens inside a tool call; raise max_tokens.";
  if (status === 401 || status === 403) return "Check the API key (MCPLEX_LLM_API_KEY or llm.apiKey).";
  if (status === 404) return "Check the base URL (most providers end in /v1) and the model name.";
  if (status === 429) return "The provider is rate limiting; wait and retry, or lower the request rate.";
  if (status !== undefined && status >= 500) return "The provider failed; retrying later may help.";
  return undefined;
}

interface ProviderErrorParts {
  message?: string;
  code?: string | number;
  type?: string;
  param?: string;
}

/** Picks message/code/type/param out of an already-parsed error body, whatever its shape. */
export function extractProviderError(body: unknown): ProviderErrorParts | undefined {
  // Gemini's compatible endpoint wraps the error in an array.
  if (Array.isArray(body)) return body.length > 0 ? extractProviderError(body[0]) : undefined;
  if (typeof body !== "object" || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const error = record.error;
  // Ollama: {"error": "model does not support tools"}
  if (typeof error === "string") return { message: error };
  if (typeof error === "object" && error !== null) {
    const e = error as Record<string, unknown>;
    const parts: ProviderErrorParts = {};
    if (typeof e.message === "string") parts.message = e.message;
    if (typeof e.code === "string" || typeof e.code === "number") parts.code = e.code;
    const type = typeof e.type === "string" ? e.type : typeof e.status === "string" ? e.status : undefined;
    if (type !== undefined) parts.type = type;
    if (typeof e.param === "string") parts.param = e.param;
    return parts;
  }
  // FastAPI/pydantic (vLLM and friends): {"detail": [{"loc": ["body", "x"], "msg": "..."}]} or {"detail": "..."}
  if (typeof record.detail === "string") return { message: record.detail };
  if (Array.isArray(record.detail)) {
    const first = record.detail[0] as Record<string, unknown> | undefined;
    const loc = Array.isArray(first?.loc) ? first.loc.filter((x) => x !== "body").map(String) : [];
    const parts: ProviderErrorParts = {
      message: record.detail
        .map((d) => {
          const item = d as Record<string, unknown>;
          const where = Array.isArray(item.loc) ? item.loc.join(".") : "";
          return `${where}: ${String(item.msg ?? "invalid")}`;
        })
        .join("; "),
    };
    if (typeof first?.type === "string") parts.type = first.type;
    if (loc[0] !== undefined) parts.param = loc[0];
    return parts;
  }
  // Older vLLM: {"object": "error", "message": "...", "type": "...", "code": 400}
  if (typeof record.message === "string" && (record.object === "error" || "type" in record)) {
    const parts: ProviderErrorParts = { message: record.message };
    if (typeof record.type === "string") parts.type = record.type;
    if (typeof record.code === "string" || typeof record.code === "number") parts.code = record.code;
    if (typeof record.param === "string") parts.param = record.param;
    return parts;
  }
  return undefined;
}

/** Builds the {@link LlmError} for a non-2xx response from its status, body text and headers. */
export function llmErrorFromResponse(status: number, bodyText: string, headers?: Headers): LlmError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const parts = extractProviderError(parsed);
  const providerMessage = parts?.message ?? (bodyText.trim().slice(0, 500) || undefined);
  const fields: LlmErrorFields = { kind: "http", status, body: bodyText.slice(0, 2000) };
  if (providerMessage !== undefined) fields.providerMessage = providerMessage;
  if (parts?.code !== undefined) fields.providerCode = parts.code;
  if (parts?.type !== undefined) fields.providerType = parts.type;
  if (parts?.param !== undefined) fields.param = parts.param;
  const retryAfter = parseRetryAfter(headers?.get("retry-after") ?? null);
  if (retryAfter !== undefined) fields.retryAfterMs = retryAfter;
  return new LlmError(
    `chat completion failed with HTTP ${status}: ${providerMessage ?? "no message"}`,
    fields,
  );
}

/** Builds the {@link LlmError} for an `error` object that arrived inside a stream. */
export function llmErrorFromStream(payload: unknown): LlmError {
  const parts = extractProviderError(payload);
  const fields: LlmErrorFields = { kind: "stream", retryable: false };
  if (parts?.message !== undefined) fields.providerMessage = parts.message;
  if (parts?.code !== undefined) fields.providerCode = parts.code;
  if (parts?.type !== undefined) fields.providerType = parts.type;
  const status = typeof parts?.code === "number" ? parts.code : undefined;
  if (status !== undefined && status >= 400 && status < 600) fields.status = status;
  return new LlmError(`the provider reported an error mid-stream: ${parts?.message ?? "no message"}`, fields);
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
