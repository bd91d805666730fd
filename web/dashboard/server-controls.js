// What the servers' rows let a person do, and each server's latency chart.

import { authHeaders } from "./auth.js";
import { clock, el, ms } from "./dom.js";
import { sparkline } from "./sparkline.js";

/** The actions that make sense in a server's state. */
function actionsOf(server) {
  if (!server.enabled) return ["enable"];
  const idle = server.state === "idle" || server.state === "stopped";
  return [idle ? "start" : "restart", "disable"];
}

/**
 * A `<td>` of buttons for a server's row. Each POSTs `/dashboard/servers/<name>/<action>` with
 * the token in its Authorization header, shows the outcome in #action-message, then calls
 * `done()` (the page reads the state again).
 */
export function actionCell(server, done) {
  const cell = el("td", { class: "actions" });
  for (const action of actionsOf(server)) {
    const button = el("button", { type: "button", class: "small", "data-action": action }, action);
    button.addEventListener("click", () => act(server.name, action, button).finally(done));
    cell.append(button);
  }
  return cell;
}

async function act(server, action, button) {
  button.disabled = true;
  const message = document.getElementById("action-message");
  message.hidden = false;
  message.className = "muted";
  message.textContent = `${action} ${server}…`;
  try {
    const response = await fetch(`/dashboard/servers/${encodeURIComponent(server)}/${action}`, {
      method: "POST",
      headers: authHeaders(),
      cache: "no-store",
    });
    const body = await response.json().catch(() => ({}));
    const hint = body.hint === undefined ? "" : ` — ${body.hint}`;
    message.className = response.ok ? "ok-text" : "error";
    message.textContent = response.ok
      ? `${server}: ${action} done (${body.server?.state ?? "?"})`
      : `${server}: ${action} refused (${response.status}): ${body.error ?? response.statusText}${hint}`;
  } catch (error) {
    message.className = "error";
    message.textContent = `${server}: ${action} failed: ${error.message}`;
  } finally {
    button.disabled = false;
  }
}

/** One row per server: its name, a chart of p50 and p95 per minute, and the last minute's figures. */
export function latencyRows(servers, latency, now) {
  const newest = Math.floor(now / latency.bucketMs) * latency.bucketMs;
  const oldest = newest - latency.windowMs + latency.bucketMs;
  return servers.map((s) => {
    const points = latency.servers[s.name] ?? [];
    const last = points.at(-1);
    const label = (p, q) =>
      `${clock(p.at)}: ${q} ${ms(p[q])} ms over ${p.calls} call${p.calls === 1 ? "" : "s"}`;
    const series = (q) => ({
      name: q,
      className: q,
      points: points.map((p) => ({ x: p.at, y: p[q], label: label(p, q) })),
    });
    return el(
      "div",
      { class: "latency-row", "data-server": s.name },
      el("span", { class: "name" }, s.name),
      sparkline([series("p95"), series("p50")], { xMin: oldest, xMax: newest, unit: " ms" }),
      el(
        "span",
        { class: "muted" },
        last === undefined ? "no calls" : `p50 ${ms(last.p50)} · p95 ${ms(last.p95)} ms`,
      ),
    );
  });
}
