import { redactValue, someString } from "../config/redact.js";
import type { GuardrailConfig, PiiKind } from "../config/types.js";
import type { ImmediateCheck } from "./guardrail-layer.js";

// Personal data in results, found by pattern and, where the data carries one, its check digit:
// a heuristic that misses what is written otherwise and may take a number for a phone. Cards
// must pass Luhn's check and IBANs ISO 13616's mod 97, so random digits are rarely taken.

// Emails are found by a scan (see replaceEmails); these patterns' repetitions are all bounded.
const PATTERNS: ReadonlyArray<{ kind: PiiKind; pattern: RegExp; valid?: (text: string) => boolean }> = [
  { kind: "iban", pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g, valid: ibanValid },
  { kind: "card", pattern: /\b\d(?:[ -]?\d){12,18}\b/g, valid: luhnValid },
  {
    kind: "phone",
    // International (+ and a country code) or North American ((555) 123-4567) forms.
    pattern:
      /(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){2,4}|\(\d{3}\) ?\d{3}[ .-]\d{4})(?!\d)/g,
  },
];

/** The order kinds are told in. */
const ORDER: readonly PiiKind[] = ["email", "phone", "card", "iban"];

const LABEL: Readonly<Record<PiiKind, string>> = {
  email: "email",
  phone: "phone",
  card: "card",
  iban: "IBAN",
};

/**
 * `pii`: emails, phone numbers, payment cards (Luhn-checked) and IBANs (mod-97-checked) in every
 * string of a result (its text, its structured content, their keys) redacted as `[email redacted]`, or
 * only counted, per kind (`types`, default all redacted).
 */
export function piiGuardrail(config: GuardrailConfig): ImmediateCheck {
  const action = (kind: PiiKind) => config.types?.[kind] ?? "redact";
  return {
    // An email has an `@`, the other kinds have digits: a text with neither holds none.
    clearText: (json) => !json.includes("@") && !DIGIT.test(json),
    response(result) {
      // Most results hold nothing of the kind: a look without a copy first (an email has an
      // `@`, the rest have digits).
      if (!someString(result, (text) => text.includes("@") || DIGIT.test(text))) return { action: "pass" };
      const found = new Map<PiiKind, number>();
      const redact = (text: string): string => {
        let out = replaceEmails(text, (match) => {
          found.set("email", (found.get("email") ?? 0) + 1);
          return action("email") === "redact" ? "[email redacted]" : match;
        });
        for (const { kind, pattern, valid } of PATTERNS) {
          out = out.replace(pattern, (match) => {
            if (valid !== undefined && !valid(match)) return match;
            found.set(kind, (found.get(kind) ?? 0) + 1);
            return action(kind) === "redact" ? `[${LABEL[kind]} redacted]` : match;
          });
        }
        return out;
      };
      const value = redactValue(result, redact);
      if (found.size === 0) return { action: "pass" };
      const counts = [...found]
        .sort(([a], [b]) => ORDER.indexOf(a) - ORDER.indexOf(b))
        .map(
          ([kind, n]) =>
            `${n} ${LABEL[kind]}${n === 1 ? "" : "s"} ${action(kind) === "redact" ? "redacted" : "seen"}`,
        );
      const rewrote = [...found.keys()].some((kind) => action(kind) === "redact");
      return rewrote
        ? { action: "rewrite", value, detail: counts.join(", ") }
        : { action: "note", detail: counts.join(", ") };
    },
  };
}

const LOCAL = /[A-Za-z0-9._%+-]/;
const DOMAIN = /[A-Za-z0-9.-]/;

/**
 * `text` with each email address passed through `replace`. A scan out from each `@` (a local
 * part of up to 64 characters before it, a domain of up to 255 after it whose last label is two
 * letters or more), not a regular expression: one over such text backtracks for as long as a
 * server's result makes it (80 KB of `a.a.a...` took 26 s), and results come from servers.
 */
function replaceEmails(text: string, replace: (match: string) => string): string {
  let out = "";
  let copied = 0;
  let at = text.indexOf("@");
  while (at !== -1) {
    let start = at;
    while (start > 0 && at - start < 64 && LOCAL.test(text[start - 1]!)) start--;
    let end = at + 1;
    while (end < text.length && end - at <= 255 && DOMAIN.test(text[end]!)) end++;
    // The domain without trailing dots or hyphens, ending in a label of letters.
    while (end > at + 1 && (text[end - 1] === "." || text[end - 1] === "-")) end--;
    const domain = text.slice(at + 1, end);
    const tld = domain.slice(domain.lastIndexOf(".") + 1);
    if (
      start < at &&
      start >= copied &&
      domain.includes(".") &&
      /^[A-Za-z]{2,}$/.test(tld) &&
      !domain.includes("..")
    ) {
      out += text.slice(copied, start) + replace(text.slice(start, end));
      copied = end;
    }
    at = text.indexOf("@", Math.max(at + 1, copied));
  }
  return out + text.slice(copied);
}

const DIGIT = /\d/;

/** Luhn's check over the digits of a card number (13 to 19 of them). */
export function luhnValid(text: string): boolean {
  const digits = text.replace(/[ -]/g, "");
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616's check of an IBAN: the country and check digits moved to the end, mod 97 is 1. */
export function ibanValid(text: string): boolean {
  const iban = text.replace(/ /g, "");
  if (iban.length < 15 || iban.length > 34) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const char of moved) {
    const code = char.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : char;
    for (const digit of value) rest = (rest * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return rest === 1;
}
