import { describeValue, joinPath } from "./config-issues.js";
import { remoteUrlProblem } from "./remote-url.js";
import type { GuardrailConfig, GuardrailKind, PiiKind } from "./types.js";
import type { RawMap, ValueReader } from "./value-reader.js";

const KINDS: readonly GuardrailKind[] = ["size", "schema", "pii", "secrets", "injection", "webhook"];
const PII_KINDS: readonly PiiKind[] = ["email", "phone", "card", "iban"];
const COMMON_KEYS = ["guardrail", "servers", "tools", "profiles", "phase", "mode", "failOpen"];
const SIZE_KEYS = [...COMMON_KEYS, "maxBytes", "maxTokens", "structured"];
const PII_KEYS = [...COMMON_KEYS, "types"];
const SECRETS_KEYS = [...COMMON_KEYS, "action"];
const WEBHOOK_KEYS = [...COMMON_KEYS, "url", "timeout", "type", "headers"];
/** Where each acts unless told: a result's size, both sides' schemas, personal data in results. */
const DEFAULT_PHASE: Readonly<Record<GuardrailKind, GuardrailConfig["phase"]>> = {
  size: "response",
  schema: "both",
  pii: "response",
  secrets: "both",
  injection: "response",
  webhook: "request",
};

/**
 * `guardrails:`: a list of `{ guardrail, servers?, tools?, profiles?, phase?, mode?, failOpen?,
 * ...its own keys }`. Each entry is one guardrail at work on the tool calls its selectors pick.
 */
export function readGuardrails(reader: ValueReader, value: unknown): GuardrailConfig[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    reader.fail(
      "guardrails",
      `must be a list such as [{ guardrail: size, maxBytes: 256KiB }], not ${describeValue(value)}`,
    );
    return undefined;
  }
  const out: GuardrailConfig[] = [];
  value.forEach((item, i) => {
    const entry = readGuardrail(reader, item, joinPath("guardrails", i));
    if (entry !== undefined) out.push(entry);
  });
  return out;
}

function readGuardrail(reader: ValueReader, item: unknown, path: string): GuardrailConfig | undefined {
  const node = reader.map(item, path);
  if (node === undefined) return undefined;
  const kind = node.guardrail as GuardrailKind;
  if (!KINDS.includes(kind)) {
    reader.fail(
      joinPath(path, "guardrail"),
      `must be one of ${KINDS.join(", ")}, not ${describeValue(node.guardrail)}`,
    );
    return undefined;
  }
  // Each guardrail's own keys beside the common ones.
  if (kind === "size") reader.knownKeys(node, path, SIZE_KEYS);
  else if (kind === "pii") reader.knownKeys(node, path, PII_KEYS);
  else if (kind === "secrets") reader.knownKeys(node, path, SECRETS_KEYS);
  else if (kind === "webhook") reader.knownKeys(node, path, WEBHOOK_KEYS);
  else reader.knownKeys(node, path, COMMON_KEYS);
  const phase = node.phase ?? DEFAULT_PHASE[kind];
  if (phase !== "request" && phase !== "response" && phase !== "both") {
    reader.fail(joinPath(path, "phase"), `must be request, response or both, not ${describeValue(phase)}`);
    return undefined;
  }
  if ((kind === "size" || kind === "pii" || kind === "injection") && phase !== "response") {
    reader.fail(joinPath(path, "phase"), `${kind} acts on results; leave phase out or set it to response`);
    return undefined;
  }
  // Injection is a heuristic: it records unless told to act.
  const mode = node.mode ?? (kind === "injection" ? "audit" : "enforce");
  if (mode !== "enforce" && mode !== "audit") {
    reader.fail(joinPath(path, "mode"), `must be enforce or audit, not ${describeValue(mode)}`);
    return undefined;
  }
  const entry: GuardrailConfig = {
    guardrail: kind,
    phase,
    mode,
    failOpen: reader.boolean(node.failOpen, joinPath(path, "failOpen")) ?? false,
  };
  for (const key of ["servers", "tools", "profiles"] as const) {
    const list = reader.stringList(node[key], joinPath(path, key));
    if (list !== undefined) entry[key] = list;
  }
  return readOwn(reader, node, path, entry) ? entry : undefined;
}

/** The guardrail's own keys; false when one is wrong. */
function readOwn(reader: ValueReader, node: RawMap, path: string, entry: GuardrailConfig): boolean {
  if (entry.guardrail === "size") {
    const maxBytes = reader.byteSize(node.maxBytes, joinPath(path, "maxBytes"));
    const maxTokens = reader.count(node.maxTokens, joinPath(path, "maxTokens"));
    if (maxBytes !== undefined) entry.maxBytes = maxBytes;
    if (maxTokens !== undefined) entry.maxTokens = maxTokens;
    if (maxBytes === undefined && maxTokens === undefined) {
      if (node.maxBytes === undefined && node.maxTokens === undefined)
        reader.fail(path, 'size needs maxBytes (such as "256KiB") or maxTokens (such as 20000), or both');
      return false;
    }
    const structured = node.structured ?? "drop";
    if (structured !== "drop" && structured !== "refuse") {
      reader.fail(joinPath(path, "structured"), `must be drop or refuse, not ${describeValue(structured)}`);
      return false;
    }
    entry.structured = structured;
  }
  if (entry.guardrail === "secrets") {
    const action = node.action ?? "redact";
    if (action !== "block" && action !== "redact") {
      reader.fail(joinPath(path, "action"), `must be block or redact, not ${describeValue(action)}`);
      return false;
    }
    entry.action = action;
  }
  if (entry.guardrail === "webhook") return readWebhook(reader, node, path, entry);
  if (entry.guardrail === "pii" && node.types !== undefined) {
    const types = reader.map(node.types, joinPath(path, "types"));
    if (types === undefined) return false;
    reader.knownKeys(types, joinPath(path, "types"), PII_KINDS);
    entry.types = {};
    for (const kind of PII_KINDS) {
      const action = types[kind];
      if (action === undefined) continue;
      if (action !== "redact" && action !== "audit") {
        reader.fail(
          joinPath(joinPath(path, "types"), kind),
          `must be redact or audit, not ${describeValue(action)}`,
        );
        return false;
      }
      entry.types[kind] = action;
    }
  }
  return true;
}

/** A `webhook` entry's service: where, how long, what kind, with which headers. */
function readWebhook(reader: ValueReader, node: RawMap, path: string, entry: GuardrailConfig): boolean {
  const url = reader.nonEmpty(node.url, joinPath(path, "url"));
  if (url === undefined) {
    if (node.url === undefined)
      reader.fail(joinPath(path, "url"), "is required: where the guardrail service listens");
    return false;
  }
  const problem = remoteUrlProblem(reader.probe(url));
  if (problem !== undefined) {
    reader.fail(joinPath(path, "url"), `is refused: ${problem} (calls and results go there)`);
    return false;
  }
  entry.url = url;
  const timeout = reader.duration(node.timeout, joinPath(path, "timeout"));
  if (timeout !== undefined) entry.timeout = timeout;
  const type = node.type ?? "validator";
  if (type !== "validator" && type !== "mutator") {
    reader.fail(joinPath(path, "type"), `must be validator or mutator, not ${describeValue(type)}`);
    return false;
  }
  entry.type = type;
  const headers = reader.stringMap(node.headers, joinPath(path, "headers"));
  if (headers !== undefined) entry.headers = headers;
  return true;
}
