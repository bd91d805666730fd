// Prompts: pick one, fill its arguments with the server's completions (completion/complete
// through the gateway), get it, and see its messages.

import { promptMessages } from "./content-view.js";
import { el } from "./dom.js";

/** Mounts the #prompts-panel section. Returns `{ refresh }`. */
export function mountPromptRunner(client, { openResource }) {
  const $ = (id) => document.getElementById(id);
  const picker = $("pr-prompt");
  const fields = $("pr-args");
  const output = $("pr-result");
  let prompts = [];
  let inputs = [];

  const values = () =>
    Object.fromEntries(
      inputs.filter(({ input }) => input.value !== "").map(({ name, input }) => [name, input.value]),
    );

  const complete = async (prompt, name, input, list) => {
    const others = values();
    delete others[name];
    try {
      const { completion } = await client.request("completion/complete", {
        ref: { type: "ref/prompt", name: prompt.name },
        argument: { name, value: input.value },
        ...(Object.keys(others).length === 0 ? {} : { context: { arguments: others } }),
      });
      list.replaceChildren(
        ...(completion?.values ?? []).map((value) => {
          const option = el("button", { type: "button", class: "small suggestion" }, value);
          option.addEventListener("click", () => {
            input.value = value;
            list.replaceChildren();
            input.focus();
          });
          return el("li", {}, option);
        }),
      );
    } catch {
      // A server without completions: no suggestions.
      list.replaceChildren();
    }
  };

  const choose = () => {
    const prompt = prompts.find((p) => p.name === picker.value);
    output.replaceChildren();
    inputs = [];
    if (prompt === undefined) {
      fields.replaceChildren();
      $("pr-description").textContent = "";
      return;
    }
    $("pr-description").textContent = [prompt.title, prompt.description].filter(Boolean).join(": ");
    fields.replaceChildren(
      ...(prompt.arguments ?? []).map((arg) => {
        const input = el("input", {
          type: "text",
          name: arg.name,
          autocomplete: "off",
          required: arg.required === true,
        });
        const list = el("ul", { class: "completions", "data-for": arg.name });
        let timer;
        const ask = () => {
          clearTimeout(timer);
          timer = setTimeout(() => complete(prompt, arg.name, input, list), 150);
        };
        input.addEventListener("input", ask);
        input.addEventListener("focus", ask);
        inputs.push({ name: arg.name, input });
        return el(
          "label",
          { class: "field", "data-field": arg.name },
          el(
            "span",
            { class: "field-name" },
            arg.title ?? arg.name,
            arg.required === true ? el("abbr", { title: "required", class: "required" }, "*") : "",
          ),
          input,
          arg.description === undefined ? "" : el("small", { class: "hint" }, arg.description),
          list,
        );
      }),
    );
    if (inputs.length === 0) fields.append(el("p", { class: "muted" }, "This prompt takes no arguments."));
  };

  picker.addEventListener("change", choose);
  $("pr-run").addEventListener("submit", async (event) => {
    event.preventDefault();
    const prompt = prompts.find((p) => p.name === picker.value);
    if (prompt === undefined) return;
    output.replaceChildren(el("p", { class: "muted" }, "getting…"));
    try {
      const result = await client.request("prompts/get", { name: prompt.name, arguments: values() });
      output.replaceChildren(promptMessages(result, { open: openResource }));
    } catch (error) {
      output.replaceChildren(el("p", { class: "error", role: "alert" }, error.message));
    }
  });

  return {
    async refresh() {
      const previous = picker.value;
      prompts = await client.listAll("prompts/list", "prompts");
      prompts.sort((a, b) => a.name.localeCompare(b.name));
      picker.replaceChildren(
        el("option", { value: "" }, `choose a prompt (${prompts.length})`),
        ...prompts.map((p) => el("option", { value: p.name }, p.name)),
      );
      picker.value = prompts.some((p) => p.name === previous) ? previous : "";
      if (picker.value !== previous || previous === "") choose();
    },
  };
}
