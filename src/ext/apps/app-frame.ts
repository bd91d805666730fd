/**
 * The frame an MCP App (SEP-1865) runs in on the dashboard: `/dashboard/app-frame`, loaded by
 * the playground in an `<iframe sandbox="allow-scripts">` (an opaque origin: no access to the
 * page, its storage or the gateway's endpoints with the person's token, which only the page
 * holds). It is the spec's sandbox proxy: it tells the page it is ready
 * (`ui/notifications/sandbox-proxy-ready`), takes the app's HTML from it
 * (`ui/notifications/sandbox-resource-ready`) and becomes that document, whose scripts then talk
 * to the page with `postMessage`. Its Content-Security-Policy is made from the app resource's
 * `_meta.ui.csp` (the origins the server says its app needs), which the page passes in the
 * query; nothing else is allowed to load, and origins that are not plain origins are dropped.
 */

/** What an app's `_meta.ui.csp` may ask for (each a list of origins). */
interface AppCsp {
  connectDomains?: unknown;
  resourceDomains?: unknown;
  frameDomains?: unknown;
  baseUriDomains?: unknown;
}

/** A scheme and host (a `*.` wildcard allowed), an optional port: nothing a CSP could misread. */
const ORIGIN = /^(https?|wss?):\/\/(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?$/;

function origins(list: unknown): string[] {
  return Array.isArray(list) ? list.filter((o): o is string => typeof o === "string" && ORIGIN.test(o)) : [];
}

/** The frame's policy for `csp` (the app's `_meta.ui.csp`, possibly absent or malformed). */
export function appFramePolicy(csp: AppCsp | undefined): string {
  const resources = origins(csp?.resourceDomains).join(" ");
  const connect = origins(csp?.connectDomains).join(" ");
  const frames = origins(csp?.frameDomains).join(" ");
  const base = origins(csp?.baseUriDomains).join(" ");
  const withSources = (directive: string, always: string, extra: string) =>
    `${directive} ${[always, extra].filter((s) => s !== "").join(" ")}`;
  return [
    "default-src 'none'",
    withSources("script-src", "'unsafe-inline'", resources),
    withSources("style-src", "'unsafe-inline'", resources),
    withSources("img-src", "data: blob:", resources),
    withSources("font-src", "data:", resources),
    withSources("media-src", "data: blob:", resources),
    connect === "" ? "connect-src 'none'" : `connect-src ${connect}`,
    frames === "" ? "frame-src 'none'" : `frame-src ${frames}`,
    base === "" ? "base-uri 'none'" : `base-uri ${base}`,
    "form-action 'none'",
    "frame-ancestors 'self'",
  ].join("; ");
}

/** The `csp` query parameter (base64url JSON) as the app's CSP; `undefined` when absent or not JSON. */
export function cspFromQuery(value: string | null): AppCsp | undefined {
  if (value === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, "base64url").toString("utf8"));
    return typeof parsed === "object" && parsed !== null ? (parsed as AppCsp) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The proxy document: it takes the app's HTML from its parent (only from its parent) and
 * becomes it. Inline, since the frame's policy allows inline scripts for the app anyway.
 */
export const APP_FRAME_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>app</title></head><body><script>
addEventListener("message", function (event) {
  if (event.source !== parent) return;
  var m = event.data;
  if (!m || m.method !== "ui/notifications/sandbox-resource-ready" || !m.params || typeof m.params.html !== "string") return;
  document.open();
  document.write(m.params.html);
  document.close();
});
parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, "*");
</script></body></html>
`;
