import type { IncomingHttpHeaders } from "node:http";
import { HEADER_MISMATCH } from "./protocol.js";

const NAMED_BY: Record<string, "name" | "uri"> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
};

/** Decodes an `Mcp-Name` / `Mcp-Param-*` value: plain, or `=?base64?...?=` for unsafe text. */
export function decodeHeaderValue(value: string): string {
  if (value.startsWith("=?base64?") && value.endsWith("?=")) {
    return Buffer.from(value.slice(9, -2), "base64").toString("utf8");
  }
  return value;
}

/**
 * The 2026 standard headers of a request POST, checked against its body:
 * `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` where the method names a
 * tool, prompt or resource. Returns the -32020 error to answer, or undefined.
 */
export function checkModernHeaders(
  headers: IncomingHttpHeaders,
  method: string,
  params: Record<string, unknown> | undefined,
  bodyVersion: string,
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
  const key = NAMED_BY[method];
  if (key !== undefined) {
    const name = headers["mcp-name"];
    if (typeof name !== "string") return mismatch(`the Mcp-Name header is missing (${method} needs it)`);
    const expected = params?.[key];
    if (decodeHeaderValue(name) !== expected) return mismatch(`Mcp-Name does not match params.${key}`);
  }
  return undefined;
}

function mismatch(message: string): { code: number; message: string } {
  return { code: HEADER_MISMATCH, message: `Header mismatch: ${message}` };
}
