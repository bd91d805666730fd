// The tool playground: pick a tool, fill the form made from its input schema (or edit the
// arguments as JSON), call it through the gateway's /mcp, watch its progress, cancel it, and
// see what it returned; a tool with an MCP App shows its app under the result.

import { appUri, mountApp } from "./app-view.js";
import { toolResult } from "./content-view.js";
import { el } from "./dom.js";
import { McpError, paramHeaders } from "./mcp-client.js";
import { schemaForm } from "./schema-form.js";

/**
 * Mounts the playground in the page's #playground section. `openResource(uri)` shows a
 * resource (for resource links in results); `catalog()` gives the dashboard state's tools
 * (server and original names, for an app's calls). Returns `{ refresh }` to read the tools again.
 */
export function mountPlayground(client, { openResource, catalog = () => [] }) {
  const $ = (id) => document.getElementById(id);
  const picker = $("pg-tool");
  const json = $("pg-json");
  const toggle = $("pg-mode");
  const call = $("pg-call");
  const cancel = $("pg-cancel");
  const progress = $("pg-progress");
  const output = $("pg-result");
  const problem = $("pg-error");
  let tools = [];
  let form;
  let mode = "form";
  let running;
  /** The app of the last call, if its tool has one. */
  let app;

  const closeApp = () => {
    const open = app;
    app = undefined;
    return open?.close();
  };

  const selected = () => tools.find((t) => t.name === picker.value);

  const showProblem = (message) => {
    problem.textContent = message;
    problem.hidden = message === "";
  };

  const setMode = (next) => {
    if (next === mode) return;
    try {
      if (next === "json") json.value = JSON.stringify(form?.value({ partial: true }) ?? {}, null, 2);
      else form?.setValue(JSON.parse(json.value === "" ? "{}" : json.value));
    } catch (error) {
      showProblem(`cannot switch to the ${next === "json" ? "JSON editor" : "form"}: ${error.message}`);
      return;
    }
    showProblem("");
    mode = next;
    $("pg-form").hidden = mode !== "form";
    json.hidden = mode !== "json";
    toggle.textContent = mode === "form" ? "Edit as JSON" : "Edit as form";
    toggle.setAttribute("aria-pressed", String(mode === "json"));
  };

  const choose = () => {
    const tool = selected();
    closeApp();
    showProblem("");
    output.replaceChildren();
    progress.hidden = true;
    if (tool === undefined) {
      $("pg-form").replaceChildren();
      $("pg-description").textContent = "";
      return;
    }
    $("pg-description").textContent = [tool.title, tool.description].filter(Boolean).join(": ");
    form = schemaForm(tool.inputSchema);
    $("pg-form").replaceChildren(form.element);
    json.value = JSON.stringify(form.value({ partial: true }), null, 2);
  };

  const run = async () => {
    const tool = selected();
    if (tool === undefined || running !== undefined) return;
    let args;
    try {
      args = mode === "form" ? form.value() : JSON.parse(json.value === "" ? "{}" : json.value);
      if (typeof args !== "object" || args === null || Array.isArray(args))
        throw new Error("the arguments must be a JSON object");
    } catch (error) {
      showProblem(error.message);
      return;
    }
    showProblem("");
    await closeApp();
    running = new AbortController();
    call.disabled = true;
    cancel.disabled = false;
    progress.hidden = true;
    progress.removeAttribute("value");
    $("pg-progress-text").textContent = "";
    output.replaceChildren(el("p", { class: "muted" }, "calling…"));
    const started = performance.now();
    try {
      const result = await client.request(
        "tools/call",
        { name: tool.name, arguments: args },
        {
          signal: running.signal,
          extraHeaders: paramHeaders(tool.inputSchema, args),
          onProgress: ({ progress: done, total, message }) => {
            progress.hidden = false;
            if (typeof total === "number" && total > 0) {
              progress.max = total;
              progress.value = done;
            }
            $("pg-progress-text").textContent =
              `${done}${total === undefined ? "" : ` / ${total}`}${message === undefined ? "" : ` · ${message}`}`;
          },
        },
      );
      output.replaceChildren(
        el(
          "p",
          { class: "muted", id: "pg-took" },
          `${tool.name} answered in ${(performance.now() - started).toFixed(0)} ms`,
        ),
        toolResult(result, { open: openResource }),
      );
      if (appUri(tool) !== undefined && !result.isError) {
        const holder = el("div", { id: "pg-app", class: "app" });
        output.append(holder);
        const server = catalog().find((t) => t.name === tool.name)?.server;
        mountApp(holder, { client, tool, server, args, result, catalog }).then(
          (mounted) => {
            app = mounted;
          },
          (error) =>
            holder.replaceChildren(el("p", { class: "error", role: "alert" }, `app: ${error.message}`)),
        );
      }
    } catch (error) {
      if (running.signal.aborted)
        output.replaceChildren(el("p", { class: "badge cancelled", id: "pg-cancelled" }, "cancelled"));
      else
        output.replaceChildren(
          el(
            "p",
            { class: "error", role: "alert" },
            error instanceof McpError ? `${error.message} (${error.code})` : error.message,
          ),
        );
    } finally {
      running = undefined;
      call.disabled = false;
      cancel.disabled = true;
    }
  };

  picker.addEventListener("change", choose);
  toggle.addEventListener("click", () => setMode(mode === "form" ? "json" : "form"));
  $("pg-run").addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });
  cancel.addEventListener("click", () => running?.abort());

  return {
    async refresh() {
      const previous = picker.value;
      tools = await client.listAll("tools/list", "tools");
      tools.sort((a, b) => a.name.localeCompare(b.name));
      picker.replaceChildren(
        el("option", { value: "" }, `choose a tool (${tools.length})`),
        ...tools.map((t) => el("option", { value: t.name }, t.name)),
      );
      picker.value = tools.some((t) => t.name === previous) ? previous : "";
      if (picker.value !== previous || previous === "") choose();
    },
  };
}
