/**
 * Resources, the resource template, prompts and prompt-argument completion of the conformance
 * "everything" server.
 */
import { completable, type McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { PNG_BASE64 } from "./media.js";

const ARG1_COMPLETIONS = ["paris", "park", "party", "pasta", "london"];

export function registerResources(server: McpServer, era: "legacy" | "modern"): void {
  server.registerResource(
    "static-text",
    "test://static-text",
    { title: "Static text", description: "A fixed text resource.", mimeType: "text/plain" },
    (uri) => ({
      contents: [
        { uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." },
      ],
    }),
  );

  server.registerResource(
    "static-binary",
    "test://static-binary",
    { title: "Static binary", description: "A fixed PNG image.", mimeType: "image/png" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG_BASE64 }] }),
  );

  server.registerResource(
    "template-data",
    new ResourceTemplate("test://template/{id}/data", { list: undefined }),
    { title: "Data by id", description: "JSON data for any id.", mimeType: "application/json" },
    (uri, variables) => {
      const id = String(variables.id);
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: "application/json",
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          },
        ],
      };
    },
  );

  server.registerResource(
    "watched-resource",
    "test://watched-resource",
    {
      title: "Watched resource",
      description: "A resource clients may subscribe to.",
      mimeType: "text/plain",
    },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content" }] }),
  );

  // 2025 only: 2026 has no resources/subscribe; there a `subscriptions/listen` stream names the URIs.
  if (era === "legacy") {
    const subscribed = new Set<string>();
    server.server.setRequestHandler("resources/subscribe", (request) => {
      subscribed.add(request.params.uri);
      return {};
    });
    server.server.setRequestHandler("resources/unsubscribe", (request) => {
      subscribed.delete(request.params.uri);
      return {};
    });
  }
}

export function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    "test_simple_prompt",
    { title: "Simple prompt", description: "A prompt without arguments." },
    () => ({
      messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
    }),
  );

  server.registerPrompt(
    "test_prompt_with_arguments",
    {
      title: "Prompt with arguments",
      description: "A prompt with two required arguments; arg1 completes.",
      argsSchema: z.object({
        arg1: completable(z.string().describe("First argument"), (value) =>
          ARG1_COMPLETIONS.filter((candidate) => candidate.startsWith(value)),
        ),
        arg2: z.string().describe("Second argument"),
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [
        {
          role: "user",
          content: { type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` },
        },
      ],
    }),
  );

  server.registerPrompt(
    "test_prompt_with_embedded_resource",
    {
      title: "Prompt with an embedded resource",
      description: "Embeds a text resource under the given URI.",
      argsSchema: z.object({ resourceUri: z.string().describe("URI to embed the resource under") }),
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "resource",
            resource: {
              uri: resourceUri,
              mimeType: "text/plain",
              text: "Embedded resource content for testing.",
            },
          },
        },
        { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
      ],
    }),
  );

  server.registerPrompt(
    "test_prompt_with_image",
    { title: "Prompt with an image", description: "A PNG image followed by an instruction." },
    () => ({
      messages: [
        { role: "user", content: { type: "image", data: PNG_BASE64, mimeType: "image/png" } },
        { role: "user", content: { type: "text", text: "Please analyze the image above." } },
      ],
    }),
  );
}
