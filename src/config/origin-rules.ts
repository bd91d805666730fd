/**
 * What an allowed Origin entry must be (`serve.allowedOrigins`, `--allow-origin`, the library's
 * `allowedOrigins`): a web origin, scheme, host and port, written as browsers send it in the
 * `Origin` header, so that the gateway can compare the header to it exactly.
 */

/**
 * The entry as browsers serialize it (lowercase, no default port, no trailing slash), or why
 * it is not an origin. The HTTP front compares `Origin` headers to this form, byte for byte.
 *
 * @example
 * readOrigin("HTTPS://App.Example.com:443/") // { origin: "https://app.example.com" }
 * readOrigin("http://localhost:5173/app")   // { problem: "has a path (/app): ..." }
 */
export function readOrigin(entry: string): { origin: string } | { problem: string } {
  const example = 'such as "https://app.example.com" or "http://localhost:5173"';
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return { problem: `is not an origin; write scheme://host[:port], ${example}` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return { problem: `must be an http:// or https:// origin, ${example}` };
  if (url.username !== "" || url.password !== "")
    return { problem: `must not carry a user name or password; write scheme://host[:port], ${example}` };
  if ((url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "")
    return {
      problem: `has a path, query or fragment (${url.pathname}${url.search}${url.hash}); an origin is scheme://host[:port] only, ${example}`,
    };
  return { origin: url.origin };
}
