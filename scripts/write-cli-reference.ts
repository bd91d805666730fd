// Writes docs/reference/cli.md from the CLI's command definitions (src/cli/definitions/).
// test/cli/cli-reference.test.ts fails when the file differs from what this writes.
//
//   npm run docs:cli
import { writeFile } from "node:fs/promises";
import { CLI_REFERENCE_PATH, cliReference } from "../src/cli/cli-reference.js";
import { ALL_DEFINITIONS } from "../src/cli/definitions/all-definitions.js";

const root = new URL("..", import.meta.url).pathname;
await writeFile(`${root}${CLI_REFERENCE_PATH}`, cliReference(ALL_DEFINITIONS));
console.log(`wrote ${CLI_REFERENCE_PATH}`);
