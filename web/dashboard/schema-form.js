// A form generated from a JSON Schema (a tool's inputSchema): strings, numbers, integers,
// booleans, enums, arrays, nested objects, required fields and defaults. Whatever the form
// cannot express (oneOf, a type union, a free-form object) gets a small JSON box of its own,
// and the playground offers the raw JSON editor for the whole of it.

import { el } from "./dom.js";

const NONE = Symbol("none");

/** The one type a schema names, or undefined for unions and untyped schemas. */
function typeOf(schema) {
  if (Array.isArray(schema.enum)) return "enum";
  if (typeof schema.type === "string") return schema.type;
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t) => t !== "null");
    return types.length === 1 ? types[0] : undefined;
  }
  if (schema.properties !== undefined) return "object";
  return undefined;
}

/**
 * A form for `schema`. `value()` reads it (throws an Error naming the first field in error;
 * with `{ partial: true }` it leaves out what is missing instead), `setValue(v)` fills it.
 *
 * @example
 * const form = schemaForm(tool.inputSchema);
 * container.append(form.element);
 * const args = form.value();
 */
export function schemaForm(schema) {
  const root = objectField(schema ?? { type: "object" }, [], true, true);
  return {
    element: root.element,
    value: ({ partial = false } = {}) => {
      const v = root.read(partial);
      return v === NONE ? {} : v;
    },
    setValue: (v) => root.write(v ?? {}),
  };
}

function label(path, schema, required) {
  const name = path.length === 0 ? "arguments" : path[path.length - 1];
  return el(
    "span",
    { class: "field-name" },
    schema.title ?? String(name),
    required ? el("abbr", { title: "required", class: "required" }, "*") : "",
  );
}

function describe(schema) {
  return schema.description === undefined ? "" : el("small", { class: "hint" }, schema.description);
}

function field(schema, path, required) {
  switch (typeOf(schema)) {
    case "enum":
      return enumField(schema, path, required);
    case "string":
      return inputField(schema, path, required, "string");
    case "number":
    case "integer":
      return inputField(schema, path, required, typeOf(schema));
    case "boolean":
      return booleanField(schema, path, required);
    case "array":
      return arrayField(schema, path, required);
    case "object":
      return schema.properties === undefined
        ? jsonField(schema, path, required)
        : objectField(schema, path, required);
    default:
      return jsonField(schema, path, required);
  }
}

const missing = (path) => new Error(`${path.join(".")} is required`);

function wrap(schema, path, required, control) {
  return el(
    "label",
    { class: "field", "data-field": path.join(".") },
    label(path, schema, required),
    control,
    describe(schema),
  );
}

function enumField(schema, path, required) {
  const select = el("select", { name: path.join(".") });
  if (!required || schema.default === undefined)
    select.append(el("option", { value: "" }, required ? "choose…" : "(none)"));
  for (const [i, option] of schema.enum.entries())
    select.append(el("option", { value: String(i) }, String(option)));
  const write = (v) => {
    const i = schema.enum.findIndex((o) => JSON.stringify(o) === JSON.stringify(v));
    select.value = i === -1 ? "" : String(i);
  };
  if (schema.default !== undefined) write(schema.default);
  return {
    element: wrap(schema, path, required, select),
    read: (partial) => {
      if (select.value === "") {
        if (required && !partial) throw missing(path);
        return NONE;
      }
      return schema.enum[Number(select.value)];
    },
    write,
  };
}

function inputField(schema, path, required, type) {
  const numeric = type === "number" || type === "integer";
  const long =
    type === "string" &&
    (schema.maxLength === undefined || schema.maxLength > 200) &&
    /text|content|body|query|prompt/i.test(path.at(-1) ?? "");
  const input = long
    ? el("textarea", { name: path.join("."), rows: 3 })
    : el("input", {
        name: path.join("."),
        type: numeric ? "number" : schema.format === "date" ? "date" : "text",
        step: type === "integer" ? "1" : numeric ? "any" : undefined,
        min: schema.minimum,
        max: schema.maximum,
      });
  if (schema.default !== undefined) input.value = String(schema.default);
  return {
    element: wrap(schema, path, required, input),
    read: (partial) => {
      const text = input.value;
      if (text === "") {
        // A required string whose default is "" may be sent empty.
        if (type === "string" && required && schema.default === "") return "";
        if (required && !partial) throw missing(path);
        return NONE;
      }
      if (!numeric) return text;
      const n = Number(text);
      if (!Number.isFinite(n)) throw new Error(`${path.join(".")} is not a number`);
      if (type === "integer" && !Number.isInteger(n)) throw new Error(`${path.join(".")} is not an integer`);
      return n;
    },
    write: (v) => {
      input.value = v === undefined || v === null ? "" : String(v);
    },
  };
}

function booleanField(schema, path, required) {
  if (!required && schema.default === undefined) {
    // Optional without a default: "not sent" is a third choice.
    const select = el(
      "select",
      { name: path.join(".") },
      el("option", { value: "" }, "(none)"),
      el("option", { value: "true" }, "true"),
      el("option", { value: "false" }, "false"),
    );
    return {
      element: wrap(schema, path, required, select),
      read: () => (select.value === "" ? NONE : select.value === "true"),
      write: (v) => {
        select.value = v === true ? "true" : v === false ? "false" : "";
      },
    };
  }
  const box = el("input", { type: "checkbox", name: path.join(".") });
  box.checked = schema.default === true;
  return {
    element: el(
      "label",
      { class: "field check", "data-field": path.join(".") },
      box,
      label(path, schema, required),
      describe(schema),
    ),
    read: () => box.checked,
    write: (v) => {
      box.checked = v === true;
    },
  };
}

function jsonField(schema, path, required) {
  const area = el("textarea", { name: path.join("."), rows: 2, class: "json", placeholder: "JSON" });
  if (schema.default !== undefined) area.value = JSON.stringify(schema.default);
  return {
    element: wrap(schema, path, required, area),
    read: (partial) => {
      if (area.value.trim() === "") {
        if (required && !partial) throw missing(path);
        return NONE;
      }
      try {
        return JSON.parse(area.value);
      } catch (error) {
        throw new Error(`${path.join(".")}: ${error.message}`);
      }
    },
    write: (v) => {
      area.value = v === undefined ? "" : JSON.stringify(v);
    },
  };
}

function arrayField(schema, path, required) {
  const items = typeof schema.items === "object" && schema.items !== null ? schema.items : {};
  const list = el("div", { class: "items" });
  const rows = [];
  // Items keep the number they were made with (their fields' names), whatever is removed later.
  let made = 0;
  const add = (v) => {
    const i = made++;
    const item = field(items, [...path, String(i)], true);
    const remove = el("button", { type: "button", class: "small", title: "remove this item" }, "−");
    const row = el("div", { class: "item" }, item.element, remove);
    const entry = { item, row };
    remove.addEventListener("click", () => {
      rows.splice(rows.indexOf(entry), 1);
      row.remove();
    });
    rows.push(entry);
    list.append(row);
    if (v !== undefined) item.write(v);
  };
  const plus = el("button", { type: "button", class: "small", "data-add": path.join(".") }, "+ item");
  plus.addEventListener("click", () => add());
  const write = (v) => {
    for (const r of rows.splice(0)) r.row.remove();
    made = 0;
    if (Array.isArray(v)) for (const x of v) add(x);
  };
  if (Array.isArray(schema.default)) write(schema.default);
  return {
    element: el(
      "fieldset",
      { class: "array", "data-field": path.join(".") },
      el("legend", {}, label(path, schema, required)),
      describe(schema),
      list,
      plus,
    ),
    read: (partial) => {
      if (rows.length === 0 && !required) return NONE;
      return rows.map((r) => {
        const v = r.item.read(partial);
        return v === NONE ? null : v;
      });
    },
    write,
  };
}

function objectField(schema, path, required, top = false) {
  const requiredKeys = new Set(Array.isArray(schema.required) ? schema.required : []);
  const fields = Object.entries(schema.properties ?? {}).map(([key, child]) => [
    key,
    field(child ?? {}, [...path, key], requiredKeys.has(key)),
  ]);
  const children = fields.map(([, f]) => f.element);
  const element = top
    ? el(
        "div",
        { class: "schema-form" },
        ...(children.length > 0 ? children : [el("p", { class: "muted" }, "This tool takes no arguments.")]),
      )
    : el(
        "fieldset",
        { class: "object", "data-field": path.join(".") },
        el("legend", {}, label(path, schema, required)),
        describe(schema),
        ...children,
      );
  return {
    element,
    read: (partial) => {
      const out = {};
      for (const [key, f] of fields) {
        const v = f.read(partial);
        if (v !== NONE) out[key] = v;
      }
      return !top && !required && Object.keys(out).length === 0 ? NONE : out;
    },
    write: (v) => {
      for (const [key, f] of fields) f.write(v?.[key]);
    },
  };
}
