// The mcplex dashboard: reads /dashboard/state once, then follows /dashboard/events (a
// server-sent event stream read with fetch, so that a bearer token can go with it).
// Everything from the gateway is shown with textContent: tool names and descriptions
// come from servers and are never parsed as HTML. The tools, resources and prompts views
// are an MCP client of the gateway's own /mcp (mcp-client.js). With sign-in on the gateway
// (`auth:`), the page signs its user in at the identity provider first (sign-in.js).

import { authHeaders, currentToken, forgetTokens, setAccessToken, setToken, signedInToken } from "./auth.js";
import { renderCluster } from "./cluster-panel.js";
import { refreshConnections } from "./connections-panel.js";
import { badge, clock, el, ms } from "./dom.js";
import { McpClient } from "./mcp-client.js";
import { mountPlayground } from "./playground.js";
import { mountPromptRunner } from "./prompt-runner.js";
import { mountResourceBrowser } from "./resource-browser.js";
import { decisionsView, renderRules } from "./rules-panel.js";
import { actionCell, availableRows, latencyRows, pinChangesView } from "./server-controls.js";
import { beginSignIn, claimsOf, finishSignIn, markSignedOut, signedOut, signInChallenge } from "./sign-in.js";

/** Finished calls kept on the page (the gateway keeps the same number). */
const RECENT_MAX = 200;
const $ = (id) => document.getElementById(id);

/** The last state read, with calls kept up to date by the event stream. */
let state;
/** Gateway clock minus page clock, ms, so that running times do not depend on the page's clock. */
let clockOffset = 0;
/**
 * Calls seen ending on the event stream, by id: a state read that was answered before a
 * call ended but arrived after its end event must not bring it back as running.
 */
const seenEnded = new Map();
let refreshTimer;
let refreshDue = 0;

const client = new McpClient({ headers: authHeaders });
/** The tools, resources and prompts views, mounted after the first state read. */
let views;
/** What the views last listed, to read the lists again when the catalog changes. */
let catalogKey = "";

function fill(tbody, rows, emptyText, columns) {
  tbody.replaceChildren(
    ...(rows.length > 0 ? rows : [el("tr", { class: "empty" }, el("td", { colspan: columns }, emptyText))]),
  );
}

function duration(totalMs) {
  const s = Math.floor(totalMs / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Why the last sign-in did not work, while the page waits for the user to try again. */
let signInProblem;
/** Whether the gateway accepted the signed-in user's token at least once (a later 401: it expired). */
let tokenAccepted = false;
/** How the Sign in button signs in: the gateway's challenge, and a step-up's scope or a prompt. */
let signInRequest;

/** Reads the state; false when the page must ask for a token, or sign its user in, first. */
async function load() {
  const response = await fetch("/dashboard/state", {
    headers: authHeaders(),
    cache: "no-store",
    credentials: "omit",
  });
  if (response.status === 401 || response.status === 403) {
    const body = await response.json().catch(() => ({}));
    // A signed-in user no rule admits gets a 403 without a challenge: still the sign-in's business.
    const challenge = signInChallenge(response) ?? (signedInToken() === undefined ? undefined : {});
    if (challenge !== undefined) await needSignIn(challenge, response.status, body.error);
    else askForToken(currentToken() === undefined ? "" : (body.error ?? "this token is not accepted"));
    return false;
  }
  if (!response.ok) throw new Error(`the gateway answered ${response.status}`);
  const next = await response.json();
  if (state !== undefined && state.gateway.startedAt !== next.gateway.startedAt) seenEnded.clear();
  state = next;
  mergeSeenEnded();
  clockOffset = state.gateway.now - Date.now();
  if (signedInToken() !== undefined) tokenAccepted = true;
  $("login").hidden = true;
  $("sign-in").hidden = true;
  $("problem").hidden = true;
  $("main").hidden = false;
  // The tools, resources and prompts views call /mcp: not there when the gateway serves stdio.
  $("tabs").hidden = state.gateway.mcpHere === false;
  render();
  refreshViews();
  // Its own messages say what went wrong with it: the rest of the page is not held up.
  refreshConnections(state.panels).catch(() => {});
  return true;
}

/** Mounts the tools, resources and prompts views once; reads their lists again when the catalog changed. */
function refreshViews() {
  if (state.gateway.mcpHere === false) return;
  const key = JSON.stringify([
    state.tools.map((t) => `${t.name}:${t.available}`),
    state.resources,
    state.resourceTemplates,
    state.prompts,
  ]);
  if (views !== undefined && key === catalogKey) return;
  catalogKey = key;
  if (views === undefined) {
    const resources = mountResourceBrowser(client);
    const openResource = (uri) => {
      showTab("resources-panel");
      resources.open(uri);
    };
    views = [
      mountPlayground(client, { openResource, catalog: () => state.tools }),
      resources,
      mountPromptRunner(client, { openResource }),
    ];
  }
  for (const view of views) view.refresh().catch(showProblem);
}

function showTab(id) {
  for (const button of $("tabs").querySelectorAll("button[data-tab]")) {
    const on = button.dataset.tab === id;
    button.setAttribute("aria-selected", String(on));
    $(button.dataset.tab).hidden = !on;
  }
}

/**
 * The gateway wants a signed-in user. A first visit, or a token that worked and has expired, goes
 * to the identity provider at once (its session makes that quick); otherwise the page says why
 * (a refused sign-in, a user no rule admits, a scope missing, a sign-out) and waits for a click.
 */
async function needSignIn(challenge, status, message) {
  const held = signedInToken();
  if (held !== undefined && status === 401) forgetTokens();
  if (
    status === 401 &&
    signInProblem === undefined &&
    !signedOut() &&
    (held === undefined || tokenAccepted)
  ) {
    try {
      await beginSignIn(challenge);
      return;
    } catch (error) {
      signInProblem = error.message;
    }
  }
  // A missing scope asks for it; anyone else may want to sign in as someone else.
  signInRequest =
    challenge.error === "insufficient_scope"
      ? { challenge, options: { scope: challenge.scope } }
      : { challenge, options: { prompt: "login" } };
  const why = signInProblem ?? (held !== undefined || status === 403 ? message : undefined);
  showSignIn(why === undefined ? "" : `Not signed in: ${why}`);
}

function showSignIn(message) {
  $("main").hidden = true;
  $("tabs").hidden = true;
  $("login").hidden = true;
  $("user").hidden = true;
  $("sign-in").hidden = false;
  $("sign-in-error").textContent = message;
}

function renderUser() {
  const user = state.gateway.user;
  const token = signedInToken();
  $("user").hidden = user === undefined || token === undefined;
  if ($("user").hidden) return;
  const claims = claimsOf(token);
  $("user-name").textContent = typeof claims.email === "string" ? claims.email : user.subject;
  $("user-name").title = `${user.subject} at ${user.issuer ?? "the identity provider"}`;
  $("user-role").textContent = user.operator ? "(operator)" : "";
}

function askForToken(message) {
  $("sign-in").hidden = true;
  $("main").hidden = true;
  $("tabs").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message;
  $("token").focus();
}

function render() {
  const { gateway, health } = state;
  const name = gateway.name === "mcplex" ? "" : `${gateway.name} `;
  const profile = gateway.profile === undefined ? "" : ` · profile ${gateway.profile}`;
  $("identity").textContent = `${name}${gateway.version}${profile}`;
  $("health").replaceWith(Object.assign(badge(health.status), { id: "health" }));
  $("endpoint").textContent = [gateway.mcp, gateway.ws].filter(Boolean).join("   ");
  renderUser();
  renderServers();
  renderCluster(state.cluster);
  renderRules(state.rules);
  if (state.latency !== undefined) {
    const { windowMs } = state.latency;
    $("latency-window").textContent = `(last ${Math.round(windowMs / 60_000)} min)`;
    const rows = latencyRows(state.servers, state.latency, gateway.now);
    $("latency").replaceChildren(...(rows.length > 0 ? rows : [el("p", { class: "muted" }, "no servers")]));
  }
  renderTools();
  renderCalls();
}

function renderSummary() {
  const { servers, tools, calls, gateway } = state;
  const enabled = servers.filter((s) => s.enabled);
  const requests = servers.reduce((sum, s) => sum + s.stats.requests, 0);
  const errors = servers.reduce((sum, s) => sum + s.stats.errors, 0);
  const card = (label, value) => el("div", { class: "card" }, el("b", {}, value), label);
  $("summary").replaceChildren(
    card("servers ready", `${enabled.filter((s) => s.state === "ready").length} / ${enabled.length}`),
    card("tools", tools.length),
    card("resources", state.resources + state.resourceTemplates),
    card("prompts", state.prompts),
    card("calls in flight", calls.active.length),
    card("server requests", requests),
    card("server errors", errors),
    card("up", duration(Date.now() + clockOffset - gateway.startedAt)),
  );
}

function renderServers() {
  // Servers under `available:` (started on request): stopped rather than disabled.
  const availableNames = new Set((state.available ?? []).map((s) => s.name));
  const rows = state.servers.map((s) => {
    const detail = el("td", { class: "detail" });
    if (availableNames.has(s.name)) detail.append(el("div", { class: "hint" }, "on demand (available:)"));
    if (s.error !== undefined) detail.append(el("div", { class: "error" }, s.error));
    if (s.hint !== undefined) detail.append(el("div", { class: "hint" }, `hint: ${s.hint}`));
    if (s.breakerOpenUntil !== undefined)
      detail.append(el("div", { class: "hint" }, `breaker open until ${clock(s.breakerOpenUntil)}`));
    else if (s.retryAt !== undefined)
      detail.append(el("div", { class: "hint" }, `next try at ${clock(s.retryAt)}`));
    if (s.lazy && (s.state === "idle" || s.state === "stopped"))
      detail.append(el("div", { class: "hint" }, "starts on first use"));
    if (s.pid !== undefined) detail.append(el("div", { class: "hint" }, `pid ${s.pid}`));
    const pinned = (state.pinChanges ?? []).filter((c) => c.server === s.name);
    if (pinned.length > 0) detail.append(pinChangesView(pinned));
    const cache = state.cache?.[s.name];
    if (cache !== undefined)
      detail.append(
        el(
          "div",
          { class: "hint cache" },
          `cache: ${cache.hits} hits, ${cache.misses} misses, ${cache.entries} kept`,
        ),
      );
    const actions = actionCell(s, () => refreshSoon(0), availableNames.has(s.name));
    return el(
      "tr",
      { "data-server": s.name },
      el("td", { class: "name" }, s.name),
      el("td", {}, badge(s.enabled ? s.state : "disabled")),
      el("td", {}, s.transport),
      el("td", {}, s.protocolVersion ?? ""),
      el("td", { class: "num" }, s.tools),
      el("td", { class: "num" }, s.stats.requests),
      el("td", { class: "num" }, s.stats.errors),
      el("td", { class: "num" }, s.stats.requests > 0 ? ms(s.stats.p50) : ""),
      el("td", { class: "num" }, s.stats.requests > 0 ? ms(s.stats.p95) : ""),
      detail,
      actions,
    );
  });
  fill($("servers").tBodies[0], rows, "no servers configured", 11);
  const available = state.available ?? [];
  $("available-section").hidden = available.length === 0;
  fill(
    $("available").tBodies[0],
    availableRows(available, state.servers, () => refreshSoon(0)),
    "",
    4,
  );
}

function renderTools() {
  const filter = $("tool-filter").value.trim().toLowerCase();
  const shown = state.tools.filter(
    (t) =>
      filter === "" ||
      `${t.name} ${t.server} ${t.title ?? ""} ${t.description ?? ""}`.toLowerCase().includes(filter),
  );
  $("tools-count").textContent =
    filter === "" ? `(${state.tools.length})` : `(${shown.length} of ${state.tools.length})`;
  const rows = shown.map((t) =>
    el(
      "tr",
      { class: t.available ? undefined : "unavailable", "data-tool": t.name },
      el("td", { class: "name" }, t.name),
      el("td", {}, t.server),
      el("td", {}, t.title === undefined ? (t.description ?? "") : `${t.title}: ${t.description ?? ""}`),
    ),
  );
  fill($("tools").tBodies[0], rows, filter === "" ? "no tools" : "no tool matches", 3);
}

/**
 * The cells both call tables have: who asked (shown to operators: the signed-in user or token,
 * and the client it came through), what was asked, of what, and which server answers.
 */
function callCells(c) {
  const client = c.client === undefined ? "" : el("span", { class: "muted" }, ` · ${c.client}`);
  return [
    el("td", { class: "caller" }, c.subject ?? "", client),
    el("td", {}, c.method),
    el("td", { class: "name" }, c.target ?? ""),
    el("td", {}, c.server ?? ""),
  ];
}

function renderCalls() {
  renderSummary();
  const now = Date.now() + clockOffset;
  const { active, recent } = state.calls;
  $("active-count").textContent = `(${active.length})`;
  fill(
    $("active").tBodies[0],
    active.map((c) =>
      el(
        "tr",
        { "data-call": c.id },
        el("td", {}, clock(c.startedAt)),
        ...callCells(c),
        el("td", { class: "num" }, Math.max(0, now - c.startedAt).toFixed(0)),
      ),
    ),
    "nothing running",
    6,
  );
  const errorsOnly = $("errors-only").checked;
  const shown = errorsOnly ? recent.filter((c) => c.outcome !== "ok") : recent;
  $("recent-count").textContent = `(${shown.length})`;
  fill(
    $("recent").tBodies[0],
    shown.map((c) =>
      el(
        "tr",
        { "data-call": c.id },
        el("td", {}, clock(c.startedAt + c.ms)),
        ...callCells(c),
        el("td", {}, badge(c.outcome)),
        el("td", { class: "num" }, ms(c.ms)),
        el("td", { class: "decided" }, decisionsView(c.decisions)),
        el("td", { class: "detail error" }, c.error ?? ""),
      ),
    ),
    errorsOnly ? "no failed calls" : "no calls yet",
    9,
  );
}

function mergeSeenEnded() {
  const { calls } = state;
  calls.active = calls.active.filter((c) => !seenEnded.has(c.id));
  const listed = new Set(calls.recent.map((c) => c.id));
  const missing = [...seenEnded.values()].filter((c) => !listed.has(c.id));
  if (missing.length === 0) return;
  calls.recent = [...calls.recent, ...missing].sort((a, b) => b.id - a.id).slice(0, RECENT_MAX);
}

/** Applies one batch from the event stream. */
function apply({ events, dropped }) {
  const { calls } = state;
  let changed = dropped > 0;
  let ended = false;
  for (const event of events) {
    if (event.type === "call-started") calls.active.push(event.call);
    else if (event.type === "call-ended") {
      calls.active = calls.active.filter((c) => c.id !== event.call.id);
      // A state read since the call ended may list it already: one row per call.
      calls.recent = [event.call, ...calls.recent.filter((c) => c.id !== event.call.id)];
      seenEnded.set(event.call.id, event.call);
      if (seenEnded.size > RECENT_MAX) seenEnded.delete(seenEnded.keys().next().value);
      ended = true;
    } else changed = true;
  }
  if (calls.recent.length > RECENT_MAX) calls.recent.length = RECENT_MAX;
  renderCalls();
  // Server states, the catalog, or calls beyond what a batch holds: read everything again
  // soon. Finished calls change the servers' counters: read them again at most once a second.
  if (changed) refreshSoon(200);
  else if (ended) refreshSoon(1000);
}

/** Reads the state again after `delayMs`, unless a read is already due sooner. */
function refreshSoon(delayMs) {
  const due = Date.now() + delayMs;
  if (refreshTimer !== undefined && refreshDue <= due) return;
  clearTimeout(refreshTimer);
  refreshDue = due;
  refreshTimer = setTimeout(() => {
    refreshTimer = undefined;
    load().catch(showProblem);
  }, delayMs);
}

function showProblem(error) {
  $("problem").hidden = false;
  $("problem").textContent = `Cannot reach the gateway: ${error.message}`;
}

function setLive(text, kind) {
  $("live").replaceWith(
    Object.assign(badge(text, kind), { id: "live", title: "Live updates from the gateway" }),
  );
}

/** Follows the event stream; resolves when it ends. */
async function follow() {
  const response = await fetch("/dashboard/events", {
    headers: authHeaders(),
    cache: "no-store",
    credentials: "omit",
  });
  if (!response.ok || response.body === null) throw new Error(`the event stream answered ${response.status}`);
  setLive("live", "ok");
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
      const message = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = message
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      if (data !== "") apply(JSON.parse(data));
    }
  }
}

/** Reads the state and follows events, starting over after the gateway restarts or the network drops. */
async function run() {
  for (;;) {
    try {
      if (!(await load())) return; // waits for a token
      await follow();
      setLive("reconnecting", "reconnecting");
    } catch (error) {
      setLive("offline", "down");
      showProblem(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

$("login").addEventListener("submit", (event) => {
  event.preventDefault();
  setToken($("token").value.trim());
  run();
});
$("sign-in-button").addEventListener("click", () => {
  signInProblem = undefined;
  const { challenge, options } = signInRequest;
  beginSignIn(challenge, options).catch((error) => showSignIn(`Not signed in: ${error.message}`));
});
// Signing out forgets the token; the page starts over, and waits for the user to sign in again.
$("sign-out").addEventListener("click", () => {
  forgetTokens();
  markSignedOut();
  location.reload();
});
$("tool-filter").addEventListener("input", () => renderTools());
$("tabs").addEventListener("click", (event) => {
  const tab = event.target.closest("button[data-tab]");
  if (tab !== null) showTab(tab.dataset.tab);
});
$("errors-only").addEventListener("change", () => renderCalls());
setInterval(() => {
  if (state !== undefined && state.calls.active.length > 0) renderCalls();
}, 500);

/** Back from the identity provider: takes the token (or the reason there is none), then runs. */
async function start() {
  try {
    const signedIn = await finishSignIn();
    if (signedIn !== undefined) setAccessToken(signedIn.accessToken);
  } catch (error) {
    signInProblem = error.message;
  }
  await run();
}
start();
