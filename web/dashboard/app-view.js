// An MCP App (SEP-1865) in the playground: a tool whose `_meta.ui.resourceUri` names a `ui://`
// resource gets that HTML run in a sandboxed frame (`/dashboard/app-frame`, an opaque origin
// with the policy the resource's `_meta.ui.csp` asks for), and the page is its host on the
// spec's message bridge: `ui/initialize`, the tool's input and result, the app's own
// `tools/call` and `resources/read` (to its own server only, through /mcp like the page's
// calls), its size. What the app sends is data: nothing of it is put in the page as HTML.

import { el } from "./dom.js";
import { McpError } from "./mcp-client.js";

const APP_PROTOCOL = "2026-01-26";
const HOST_INFO = { name: "mcplex-dashboard", version: "1.0.0" };
/** How long a torn-down app may take to answer `ui/resource-teardown`, ms. */
const TEARDOWN_MS = 500;

/** The `ui://` URI of a tool's app, or undefined when it has none. */
export function appUri(tool) {
  const meta = tool?._meta;
  const uri = meta?.ui?.resourceUri ?? meta?.["ui/resourceUri"];
  return typeof uri === "string" && uri.startsWith("ui://") ? uri : undefined;
}

/**
 * Runs the app of `tool` in `container` for one call: its `args` and `result`. `catalog()`
 * gives the dashboard state's tools (exposed name, server, original name), to send the app's
 * calls, in its server's own names, to that server's tools. Returns `{ close }`, which tears
 * the app down.
 */
export async function mountApp(container, { client, tool, server, args, result, catalog }) {
  const uri = appUri(tool);
  const read = await client.request("resources/read", { uri });
  const content = (read.contents ?? []).find((c) => c.uri === uri) ?? read.contents?.[0];
  if (typeof content?.text !== "string") throw new Error(`the app ${uri} has no HTML text`);
  const csp = content._meta?.ui?.csp;
  const frame = el("iframe", {
    class: "app-frame",
    title: `app of ${tool.name}`,
    sandbox: "allow-scripts allow-forms",
    referrerpolicy: "no-referrer",
    src: `/dashboard/app-frame${csp === undefined ? "" : `?csp=${base64url(JSON.stringify(csp))}`}`,
  });
  const status = el("p", { class: "muted app-status" }, `app ${uri}`);
  container.replaceChildren(status, frame);

  let next = 1;
  const pending = new Map();
  const post = (message) => frame.contentWindow?.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const notify = (method, params) => post({ method, params });
  const requestApp = (method, params) =>
    new Promise((resolve, reject) => {
      const id = `host-${next++}`;
      pending.set(id, { resolve, reject });
      post({ id, method, params });
    });

  /** The app's server's tool by the name the app uses: its own, or the exposed one. */
  const ownTool = (name) =>
    catalog().find((t) => t.server === server && (t.originalName === name || t.name === name));
  /** A URI the app names in its server's own namespace, as the gateway shows it. */
  const namespaced = (asked) => {
    const scheme = /^(ui|skill):\/\//.exec(asked)?.[0];
    const prefix = scheme === undefined ? undefined : `${scheme}${server}/`;
    if (prefix === undefined || !uri.startsWith(`ui://${server}/`) || asked.startsWith(prefix)) return asked;
    return prefix + asked.slice(scheme.length);
  };

  const answers = {
    "ui/initialize": () => ({
      protocolVersion: APP_PROTOCOL,
      hostInfo: HOST_INFO,
      hostCapabilities: { serverTools: {}, serverResources: {}, logging: {} },
      hostContext: {
        toolInfo: { tool },
        theme: matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        platform: "web",
        locale: navigator.language,
        containerDimensions: { maxHeight: 800, width: container.clientWidth },
      },
    }),
    ping: () => ({}),
    "tools/call": async (params) => {
      const target = ownTool(params?.name);
      if (target === undefined)
        throw new McpError(
          -32602,
          `the app may call only the tools of ${server}: ${params?.name} is not one`,
        );
      return await client.request("tools/call", { name: target.name, arguments: params.arguments ?? {} });
    },
    "resources/read": async (params) => {
      const asked = namespaced(String(params?.uri ?? ""));
      if (!asked.includes(`://${server}/`) && uri.startsWith(`ui://${server}/`))
        throw new McpError(-32602, `the app may read only the resources of ${server}`);
      return await client.request("resources/read", { uri: asked });
    },
  };

  const onMessage = async (event) => {
    if (event.source !== frame.contentWindow) return;
    const m = event.data;
    if (typeof m !== "object" || m === null || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && m.method === undefined) {
      const waiting = pending.get(m.id);
      pending.delete(m.id);
      if (m.error !== undefined) waiting?.reject(new McpError(m.error.code, m.error.message));
      else waiting?.resolve(m.result);
      return;
    }
    switch (m.method) {
      case "ui/notifications/sandbox-proxy-ready":
        notify("ui/notifications/sandbox-resource-ready", {
          html: content.text,
          ...(csp === undefined ? {} : { csp }),
        });
        return;
      case "ui/notifications/initialized":
        status.textContent = `app ${uri}`;
        notify("ui/notifications/tool-input", { arguments: args });
        notify("ui/notifications/tool-result", result);
        return;
      case "ui/notifications/size-changed": {
        const height = Number(m.params?.height);
        if (Number.isFinite(height)) frame.style.height = `${Math.min(Math.max(height, 40), 2000)}px`;
        return;
      }
      default:
        break;
    }
    if (m.id === undefined) return;
    const answer = answers[m.method];
    try {
      if (answer === undefined) throw new McpError(-32601, `the dashboard does not answer ${m.method}`);
      post({ id: m.id, result: await answer(m.params) });
    } catch (error) {
      post({
        id: m.id,
        error: {
          code: error instanceof McpError ? error.code : -32603,
          message: String(error.message ?? error),
        },
      });
    }
  };
  addEventListener("message", onMessage);

  return {
    async close() {
      await Promise.race([
        requestApp("ui/resource-teardown", {}).catch(() => {}),
        new Promise((resolve) => setTimeout(resolve, TEARDOWN_MS)),
      ]);
      removeEventListener("message", onMessage);
      for (const waiting of pending.values()) waiting.reject(new Error("the app was closed"));
      pending.clear();
      frame.remove();
    },
  };
}

function base64url(text) {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
