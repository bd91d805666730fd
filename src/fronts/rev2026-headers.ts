import type { IncomingHttpHeaders } from "node:http";
import { ErrorCode } from "../protocol/error-codes.js";
import { type ParamHeader, paramHeaders, scanParamHeaders } from "../protocol/param-headers.js";

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes an `Mcp-Name` / `Mcp-Param-*` value: plain, or `=?base64?...?=` for unsafe
 * text. Strict: malformed base64 (bad characters, missing padding) is `undefined`.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (value.startsWith("=?base64?") && value.endsWith("?=")) {
    const encoded = value.slice(9, -2);
    return BASE64.test(encoded) ? Buffer.from(encoded, "base64").toString("utf8") : undefined;
  }
  return value;
}

/**
 * The 2026 standard headers of a request POST, checked against its body:
 * `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` where the method names a
 * tool, prompt, resource or task. Returns the -32020 error to answer, or undefined.
 */
export function checkRev2026Headers(
  headers: IncomingHttpHeaders,
  method: string,
  params: Record<string, unknown> | undefined,
  bodyVersion: string,
  nameHeader: "name" | "uri" | "taskId" | undefined,
): { code: number; message: string } | undefined {
  const version = headers["mcp-protocol-version"];
  if (typeof version !== "string") return mismatch("the MCP-Protocol-Version header is missing");
  if (version !== bodyVersion) {
    return mismatch(
      `MCP-Protocol-Version ${version} does not match the request's _meta protocol version ${bodyVersion}`,
    );
  }
  const headerMethod = headers["mcp-method"];
  if (typeof headerMethod !== "string") return mismatch("the Mcp-Method header is missing");
  if (headerMethod !== method)
    return mismatch(`Mcp-Method ${headerMethod} does not match the body's method ${method}`);
  const key = nameHeader;
  if (key !== undefined) {
    const name = headers["mcp-name"];
    if (typeof name !== "string") return mismatch(`the Mcp-Name header is missing (${method} needs it)`);
    const expected = params?.[key];
    const decoded = decodeHeaderValue(name);
    if (decoded === undefined) return mismatch("Mcp-Name is not valid base64");
    if (decoded !== expected) return mismatch(`Mcp-Name does not match params.${key}`);
  }
  return undefined;
}

function mismatch(message: string): { code: number; message: string } {
  return { code: ErrorCode.HeaderMismatch, message: `Header mismatch: ${message}` };
}

/** Header values must be visible ASCII (non-ASCII travels base64-wrapped). */
const FIELD_VALUE = /^[\x20-\x7e\t]*$/;
const scans = new WeakMap<object, readonly ParamHeader[]>();

/**
 * The `Mcp-Param-*` headers of a 2026 `tools/call`, checked against the arguments the
 * tool's `x-mcp-header` annotations name: each must be present exactly when the
 * argument has a value, carry that value, and use only valid characters.
 */
export function checkParamHeaders(
  headers: IncomingHttpHeaders,
  inputSchema: object,
  args: unknown,
): { code: number; message: string } | undefined {
  let annotated = scans.get(inputSchema);
  if (annotated === undefined) {
    const scan = scanParamHeaders(inputSchema);
    annotated = scan.valid ? scan.headers : [];
    scans.set(inputSchema, annotated);
  }
  if (annotated.length === 0) return undefined;
  const expected = paramHeaders(annotated, args);
  for (const { name } of annotated) {
    const key = `mcp-param-${name.toLowerCase()}`;
    const sent = headers[key];
    const want = expected[`Mcp-Param-${name}`];
    if (typeof sent === "string" && !FIELD_VALUE.test(sent)) {
      return mismatch(`Mcp-Param-${name} has characters a header cannot carry; base64-wrap the value`);
    }
    if (want === undefined) {
      if (sent !== undefined) return mismatch(`Mcp-Param-${name} is sent but the argument has no value`);
      continue;
    }
    if (typeof sent !== "string") return mismatch(`the Mcp-Param-${name} header is missing`);
    const decoded = decodeHeaderValue(sent);
    if (decoded === undefined) return mismatch(`Mcp-Param-${name} is not valid base64`);
    if (decoded !== decodeHeaderValue(want)) {
      return mismatch(`Mcp-Param-${name} does not match the argument it mirrors`);
    }
  }
  return undefined;
}
