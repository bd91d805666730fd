/**
 * One POST over a kept-alive agent, for the benches that drive a gateway over HTTP: the answer's
 * text, or an error naming its status when it is not 200 or 202.
 */
import { type Agent, request } from "node:http";

export function post(agent: Agent, url: URL, body: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { ...headers, "content-length": Buffer.byteLength(body) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (c: string) => (text += c));
        res.on("end", () =>
          res.statusCode === 200 || res.statusCode === 202
            ? resolve(text)
            : reject(new Error(`${res.statusCode} ${text.slice(0, 200)}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The 2026 envelope (`params._meta`) of the benches' `tools/call`s. */
export const REV2026_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
};

/** The headers of a 2026 `tools/call` of the echo tool, as a 2026 client sends them. */
export const REV2026_ECHO_HEADERS: Record<string, string> = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": "echo",
};
