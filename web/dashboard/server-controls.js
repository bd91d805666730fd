// What the servers' rows let a person do, and each server's latency chart.

import { authHeaders } from "./auth.js";
import { badge, clock, el, ms } from "./dom.js";
import { sparkline } from "./sparkline.js";

/**
 * The actions that make sense in a server's state. One under `available:` (`isAvailable`) is
 * stopped, which disconnects it, rather than disabled.
 */
function actionsOf(server, isAvailable) {
  if (!server.enabled) return ["enable"];
  const idle = server.state === "idle" || server.state === "stopped";
  const actions = [idle ? "start" : "restart", isAvailable ? "stop" : "disable"];
  // A pinned server whose tools changed: approving is one click, after reading the diff beside it.
  if ((server.pinChanges ?? 0) > 0) actions.push("trust");
  return actions;
}

/**
 * What changed in a pinned server's tools since they were approved: a line per tool (changed,
 * added, removed; held or not), each with the line diff of every field that differs, folded.
 */
export function pinChangesView(changes) {
  const held = changes.filter((c) => c.held).length;
  const view = el(
    "div",
    { class: "pin-changes" },
    el(
      "div",
      { class: "error" },
      `${changes.length} tool change${changes.length === 1 ? "" : "s"} since approved` +
        (held > 0 ? `, ${held} held out of the catalog` : "") +
        "; review, then trust",
    ),
  );
  for (const change of changes) {
    const fields = change.fields.map((f) => f.field).join(", ");
    const details = el(
      "details",
      { "data-tool": change.tool },
      el("summary", {}, `${change.kind} ${change.tool}${change.held ? " (held)" : ""}: ${fields}`),
    );
    for (const field of change.fields) {
      const pre = el("pre", { class: "diff" });
      for (const line of field.diff.split("\n")) {
        const kind = line.startsWith("+ ") ? "added" : line.startsWith("- ") ? "removed" : "kept";
        pre.append(el("span", { class: kind }, `${line}\n`));
      }
      details.append(el("div", { class: "hint" }, field.field), pre);
    }
    view.append(details);
  }
  return view;
}

/**
 * A `<td>` of buttons for a server's row (`isAvailable`: one under `available:`). Each POSTs
 * `/dashboard/servers/<name>/<action>` with the token in its Authorization header, shows the
 * outcome in #action-message, then calls `done()` (the page reads the state again).
 */
export function actionCell(server, done, isAvailable = false) {
  return buttons(server.name, actionsOf(server, isAvailable), done);
}

/**
 * One row per server under `available:` that the caller may connect: whether it runs now
 * (connected once ready; while starting or failed, its state from `servers`), how many tools it
 * is known to have (live, or as recorded when it last ran), and start or stop.
 */
export function availableRows(available, servers, done) {
  return available.map((s) => {
    const state = servers.find((r) => r.name === s.name)?.state;
    const shown = !s.connected ? "available" : state === undefined || state === "ready" ? "connected" : state;
    return el(
      "tr",
      { "data-server": s.name },
      el("td", { class: "name" }, s.name),
      el("td", {}, badge(shown)),
      el("td", { class: "num" }, s.tools),
      buttons(s.name, [s.connected ? "stop" : "start"], done),
    );
  });
}

function buttons(server, actions, done) {
  const cell = el("td", { class: "actions" });
  for (const action of actions) {
    const button = el("button", { type: "button", class: "small", "data-action": action }, action);
    button.addEventListener("click", () => act(server, action, button).finally(done));
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
    // JSON, as the gateway requires of actions: a type no other site can send without a preflight.
    const response = await fetch(`/dashboard/servers/${encodeURIComponent(server)}/${action}`, {
      method: "POST",
      headers: { ...authHeaders(), "content-type": "application/json" },
      body: "{}",
      cache: "no-store",
      credentials: "omit",
    });
    const body = await response.json().catch(() => ({}));
    const hint = body.hint === undefined ? "" : ` — ${body.hint}`;
    message.className = response.ok ? "ok-text" : "error";
    message.textContent = response.ok
      ? `${server}: ${action} done (${body.server?.state ?? (body.server?.connected === false ? "stopped" : "?")})`
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
