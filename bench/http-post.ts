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
