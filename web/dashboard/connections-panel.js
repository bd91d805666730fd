// "Your connections": the servers a signed-in user connected with their own account or values
// (per-user servers), each with a Disconnect button; and for operators "Users": everyone's
// connections, to revoke one server's or all of a user's. Read from /api/connections and
// /api/users with the page's token; nothing in them is a token or a value, and every name is
// shown as text.

import { authHeaders } from "./auth.js";
import { el } from "./dom.js";

/** How long the lists are kept before a state read reads them again, ms. */
const KEEP_MS = 30_000;
const $ = (id) => document.getElementById(id);
/** What the page says of a grant forgotten here but not revoked at its server. */
const NOT_REVOKED = {
  unsupported: "the server offers no revocation; its tokens stay valid there until they expire",
  failed: "the server did not revoke it",
  "not-asked": "not revoked at the server",
};

let readAt = 0;
let shown = "";

/**
 * Shows the panels `panels` (`/dashboard/state`'s) says this viewer has, reading their lists when
 * they were not read in the last {@link KEEP_MS} (or `force`).
 */
export async function refreshConnections(panels = { connections: false, users: false }, force = false) {
  const key = `${panels.connections}:${panels.users}`;
  $("connections-section").hidden = !panels.connections;
  $("users-section").hidden = !panels.users;
  if (!force && key === shown && Date.now() - readAt < KEEP_MS) return;
  shown = key;
  readAt = Date.now();
  await Promise.all([
    panels.connections ? readConnections() : undefined,
    panels.users ? readUsers() : undefined,
  ]);
}

async function get(path) {
  const response = await fetch(path, { headers: authHeaders(), cache: "no-store", credentials: "omit" });
  const body = await response.json().catch(() => ({}));
  if (!response.ok)
    throw new Error(`${path} answered ${response.status}: ${body.error ?? response.statusText}`);
  return body;
}

async function readConnections() {
  const tbody = $("connections").tBodies[0];
  try {
    const { connections } = await get("/api/connections");
    const rows = connections.map((c) =>
      el(
        "tr",
        { "data-server": c.server },
        el("td", { class: "name" }, c.server),
        el("td", {}, howConnected(c.kinds)),
        el("td", {}, new Date(c.connectedAt).toLocaleString()),
        el(
          "td",
          { class: "actions" },
          confirmButton("Disconnect", `Disconnect ${c.server}?`, () =>
            end(`/api/connections/${encodeURIComponent(c.server)}`, "connections-message", c.server),
          ),
        ),
      ),
    );
    tbody.replaceChildren(...(rows.length > 0 ? rows : [emptyRow("you have connected no server", 4)]));
  } catch (error) {
    say("connections-message", "error", error.message);
  }
}

async function readUsers() {
  const tbody = $("users").tBodies[0];
  try {
    const { users } = await get("/api/users");
    const rows = users.map((u) => {
      const name = u.subject ?? u.key;
      const base = `/api/users/${encodeURIComponent(u.key)}/connections`;
      const servers = el("td", { class: "user-servers" });
      for (const c of u.connections)
        servers.append(
          el(
            "span",
            {
              class: "user-server",
              "data-server": c.server,
              title: `${howConnected(c.kinds)}, since ${new Date(c.connectedAt).toLocaleString()}`,
            },
            el("span", { class: "name" }, c.server),
            " ",
            confirmButton("Revoke", `Revoke ${name}'s ${c.server}?`, () =>
              end(`${base}/${encodeURIComponent(c.server)}`, "users-message", `${name} ${c.server}`),
            ),
          ),
        );
      return el(
        "tr",
        { "data-user": u.key },
        el("td", { class: "name", title: `key ${u.key}` }, name),
        servers,
        el(
          "td",
          { class: "actions" },
          confirmButton("Revoke all", `Revoke all of ${name}'s connections?`, () =>
            end(base, "users-message", name),
          ),
        ),
      );
    });
    tbody.replaceChildren(...(rows.length > 0 ? rows : [emptyRow("no user has connected a server", 3)]));
  } catch (error) {
    say("users-message", "error", error.message);
  }
}

function howConnected(kinds) {
  return kinds.map((k) => (k === "oauth" ? "your account (OAuth)" : "values you set")).join(", ");
}

function emptyRow(text, columns) {
  return el("tr", { class: "empty" }, el("td", { colspan: columns }, text));
}

/**
 * A button that asks first: a click shows the question with a button that does it and one that
 * does not; only the second click acts.
 */
function confirmButton(label, question, run) {
  const holder = el("span", { class: "confirm" });
  const ask = el(
    "button",
    { type: "button", class: "small", "data-action": label.toLowerCase().replace(" ", "-") },
    label,
  );
  const sure = el(
    "button",
    { type: "button", class: "small danger", "data-action": "confirm" },
    `Yes, ${label.toLowerCase()}`,
  );
  const cancel = el("button", { type: "button", class: "small", "data-action": "cancel" }, "Cancel");
  const prompt = el("span", { class: "confirm-question" }, question, " ", sure, " ", cancel);
  prompt.hidden = true;
  ask.addEventListener("click", () => {
    ask.hidden = true;
    prompt.hidden = false;
    sure.focus();
  });
  cancel.addEventListener("click", () => {
    prompt.hidden = true;
    ask.hidden = false;
  });
  sure.addEventListener("click", () => {
    sure.disabled = true;
    cancel.disabled = true;
    run();
  });
  holder.append(ask, prompt);
  return holder;
}

/** DELETEs `path` (a disconnect or a revoke), says how it went in `#messageId`, and reads the lists again. */
async function end(path, messageId, what) {
  say(messageId, "muted", `${what}…`);
  try {
    const response = await fetch(path, {
      method: "DELETE",
      headers: authHeaders(),
      cache: "no-store",
      credentials: "omit",
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const hint = body.hint === undefined ? "" : ` — ${body.hint}`;
      say(
        messageId,
        "error",
        `${what}: refused (${response.status}): ${body.error ?? response.statusText}${hint}`,
      );
    } else {
      const servers = body.servers ?? [];
      const notes = servers
        .filter((s) => NOT_REVOKED[s.revocation] !== undefined)
        .map(
          (s) => `; ${s.server}: ${NOT_REVOKED[s.revocation]}${s.error === undefined ? "" : ` (${s.error})`}`,
        );
      say(
        messageId,
        servers.some((s) => s.revocation === "failed") ? "error" : "ok-text",
        `${what}: ${servers.length > 0 ? `disconnected ${servers.map((s) => s.server).join(", ")}` : "nothing left to disconnect"}` +
          notes.join(""),
      );
    }
  } catch (error) {
    say(messageId, "error", `${what}: failed: ${error.message}`);
  }
  readAt = 0;
  await Promise.all([
    $("connections-section").hidden ? undefined : readConnections(),
    $("users-section").hidden ? undefined : readUsers(),
  ]);
}

function say(id, kind, text) {
  const message = $(id);
  message.hidden = false;
  message.className = kind;
  message.textContent = text;
}
