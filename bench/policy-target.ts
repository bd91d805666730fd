/**
 * A target of bench/policy-cost.ts: `serve()` over HTTP in front of the echo stdio server, with
 * nothing else (`none`), or with five policy rules and the `secrets` and `pii` guardrails
 * (`rules`). Prints `url <url>` once serving.
 *
 *   npx tsx bench/policy-target.ts none|rules
 */
import { resolve } from "node:path";
import { serve } from "../src/assembly/serve.js";
import { parseConfig } from "../src/config/parse-config.js";

const kind = process.argv[2];
if (kind !== "none" && kind !== "rules") throw new Error("policy-target.ts none|rules");
const server = `servers:
  echo:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(resolve("bench/echo-server.mjs"))}]
`;
// Five rules of the README's kinds (none of them denies the bench's calls), and two guardrails.
const rules = `policies:
  - name: restarts-on-call
    when: 'request.tool == "ops__restart_service" && !("oncall" in caller.groups)'
    effect: deny
  - name: no-prod-queries
    when: 'request.tool == "db__query" && has(request.arguments.database) && request.arguments.database == "prod"'
    effect: deny
  - name: no-weekend-deploys
    when: 'request.tool == "ci__deploy" && now.getDayOfWeek("Europe/Berlin") in [0, 6]'
    effect: deny
  - name: contractors-read-only
    when: '"contractors" in caller.groups && request.annotations.?readOnlyHint.orValue(false) != true'
    effect: deny
  - name: watch-echo
    when: 'request.tool == "echo__echo"'
    effect: audit
guardrails:
  - { guardrail: secrets }
  - { guardrail: pii }
`;
const config = parseConfig(kind === "none" ? server : server + rules, { source: `${kind}.yaml`, env: {} });
const running = await serve({
  config,
  transport: "http",
  http: { host: "127.0.0.1", port: 0, dashboard: false },
  watch: false,
});
await running.started;
console.log(`url ${running.http!.url}`);
