import { type Deadline, deadlineSignal } from "../protocol/deadline-signal.js";

/** How long an identity provider has to answer one request of ours. */
const TIMEOUT_MS = 5_000;
/** The largest document read from an identity provider (key sets and metadata are a few KiB). */
const MAX_BYTES = 512 * 1024;

/** Why a request to the identity provider failed, in words for a log line (never a credential). */
export class ProviderUnreachable extends Error {
  override readonly name = "ProviderUnreachable";

  constructor(
    message: string,
    /** The HTTP status the provider answered with, when it answered (not 200). */
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * GETs (or POSTs, with `body`) a JSON object from an identity provider: bounded in time and
 * size, redirects not followed (a metadata or key URL that moves is a configuration to fix,
 * not something to chase), anything but a 200 JSON object refused.
 *
 * @throws ProviderUnreachable saying what went wrong with `url`.
 */
export async function fetchJson(
  url: string,
  init: { body?: URLSearchParams; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Record<string, unknown>> {
  const deadline = deadlineSignal(TIMEOUT_MS, init.signal);
  try {
    return await fetchWithin(url, init, deadline);
  } finally {
    deadline.clear();
  }
}

async function fetchWithin(
  url: string,
  init: { body?: URLSearchParams; headers?: Record<string, string> },
  deadline: Deadline,
): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.body === undefined ? "GET" : "POST",
      headers: { accept: "application/json", ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body }),
      redirect: "manual",
      signal: deadline.signal,
    });
  } catch (error) {
    const reason = deadline.expired ? `no answer within ${TIMEOUT_MS / 1000} s` : causeOf(error);
    throw new ProviderUnreachable(`${url}: ${reason}`);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new ProviderUnreachable(`${url}: answered HTTP ${response.status}`, response.status);
  }
  const declared = Number(response.headers.get("content-length") ?? 0);
  if (declared > MAX_BYTES) {
    await response.body?.cancel();
    throw new ProviderUnreachable(`${url}: the document is larger than ${MAX_BYTES} bytes`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new ProviderUnreachable(`${url}: ${causeOf(error)}`);
  }
  if (text.length > MAX_BYTES)
    throw new ProviderUnreachable(`${url}: the document is larger than ${MAX_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProviderUnreachable(`${url}: the answer is not JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ProviderUnreachable(`${url}: the answer is not a JSON object`);
  return value as Record<string, unknown>;
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
