import { realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
  ResourceTemplate,
} from "@modelcontextprotocol/server";
import { completePaths } from "./completion.js";
import type { WorkspaceContext } from "./context.js";
import { fileUri, formatSize, looksBinary, mimeTypeOf } from "./file-content.js";
import type { ResolvedPath, RootWall } from "./root-wall.js";
import { walk } from "./walk.js";
import { WorkspaceError } from "./workspace-error.js";

/** Name of the resource template of files under the root. */
export const FILE_TEMPLATE_NAME = "workspace-file";

/**
 * Register files under the root as `file://` resources: a template (`<root-uri>/{+path}`, with
 * path completion), a paginated `resources/list` of the readable, non-ignored files, reads as
 * text or base64 blob, and 2025 `resources/subscribe`/`unsubscribe` backed by the watcher
 * (subscriptions are held under `subscriberKey`).
 */
export function registerResources(server: McpServer, ctx: WorkspaceContext, subscriberKey: string): void {
  const { wall, limits, watcher } = ctx;
  const rootUri = fileUri(wall.root).replace(/\/$/, "");
  const template = new ResourceTemplate(`${rootUri}/{+path}`, {
    list: undefined,
    complete: { path: (value) => completePaths(wall, value) },
  });
  server.registerResource(
    FILE_TEMPLATE_NAME,
    template,
    {
      title: "Workspace file",
      description: `A file under ${wall.root}, by its path relative to the root`,
    },
    async (uri, variables) => {
      const raw = Array.isArray(variables.path) ? variables.path.join(",") : (variables.path ?? "");
      let rel: string;
      try {
        rel = decodeURIComponent(raw);
      } catch {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Malformed resource URI ${uri.href}`);
      }
      return readFileResource(ctx, uri.href, rel);
    },
  );

  // Replaces the SDK's unpaginated listing: a root can hold far more files than one response should.
  server.server.setRequestHandler("resources/list", async (request, extra) => {
    const offset = decodeCursor(request.params?.cursor);
    const resources: Resource[] = [];
    let index = 0;
    let more = false;
    const root = { rel: "", abs: wall.root };
    for await (const entry of walk(wall, root, {
      maxDepth: Number.POSITIVE_INFINITY,
      respectGitignore: true,
      signal: extra.mcpReq.signal,
    })) {
      if (entry.type !== "file") continue;
      if (index++ < offset) continue;
      if (resources.length >= limits.pageSize) {
        more = true;
        break;
      }
      resources.push(describeFile(entry.abs, entry.rel));
    }
    return more ? { resources, nextCursor: encodeCursor(offset + resources.length) } : { resources };
  });

  server.server.setRequestHandler("resources/subscribe", async (request) => {
    let target: ResolvedPath;
    try {
      target = resolveResourceUri(wall, request.params.uri);
    } catch (error) {
      throw protocolErrorOf(request.params.uri, error);
    }
    watcher.subscribe(subscriberKey, request.params.uri, target.abs);
    return {};
  });
  server.server.setRequestHandler("resources/unsubscribe", async (request) => {
    watcher.unsubscribe(subscriberKey, request.params.uri);
    return {};
  });
}

/** The resource description of a file: `file://` URI, root-relative name, MIME type. */
export function describeFile(abs: string, rel: string): Resource {
  const mimeType = mimeTypeOf(path.basename(abs));
  return { uri: fileUri(abs), name: rel, title: path.basename(abs), ...(mimeType && { mimeType }) };
}

/** Read a file resource: text for text files, base64 blob for binary ones. */
export async function readFileResource(
  ctx: WorkspaceContext,
  uri: string,
  rel: string,
): Promise<ReadResourceResult> {
  const file = await ctx.wall.openFile(rel).catch(toProtocolError(uri));
  try {
    if (file.size > ctx.limits.maxResourceBytes) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `'${rel}' is ${formatSize(file.size)}, over the ${formatSize(ctx.limits.maxResourceBytes)} resource limit`,
        { uri, reason: "too-large" },
      );
    }
    const buf = await file.handle.readFile();
    const mimeType = mimeTypeOf(path.basename(file.abs));
    if (looksBinary(buf) || isBinaryMime(mimeType)) {
      return {
        contents: [{ uri, mimeType: mimeType ?? "application/octet-stream", blob: buf.toString("base64") }],
      };
    }
    return { contents: [{ uri, mimeType: mimeType ?? "text/plain", text: buf.toString("utf8") }] };
  } finally {
    await file.handle.close();
  }
}

/**
 * Resolve a `file://` URI to a checked path under the root (readable; for a file that does not
 * exist yet, its directory must exist inside the root). Synchronous on purpose: a 2026
 * `subscriptions/listen` must be watching before its acknowledgement goes out.
 * Throws a {@link WorkspaceError} otherwise.
 */
export function resolveResourceUri(wall: RootWall, uri: string): ResolvedPath {
  let abs: string;
  try {
    const url = new URL(uri);
    if (url.protocol !== "file:") throw new Error("not a file: URI");
    abs = fileURLToPath(url);
  } catch {
    throw new WorkspaceError("invalid-path", `'${uri}' is not a file:// URI under the workspace root`, {
      path: uri,
    });
  }
  const lexical = wall.resolve(abs, "read");
  let real: string;
  let file = "";
  try {
    real = realpathSync(lexical.abs);
  } catch {
    // Not there yet: watch it through its directory, which must exist inside the root.
    try {
      real = realpathSync(path.dirname(lexical.abs));
    } catch (error) {
      throw new WorkspaceError("not-found", `'${uri}' does not exist`, { path: uri }, { cause: error });
    }
    file = path.basename(lexical.abs);
  }
  const realRel = wall.relOf(real);
  if (realRel === undefined) {
    throw new WorkspaceError(
      "outside-root",
      `Refused '${uri}': it resolves to ${real}, outside the workspace root`,
      {
        path: uri,
        rule: "symlink target outside the root",
      },
    );
  }
  const rel = file === "" ? realRel : realRel === "" ? file : `${realRel}/${file}`;
  wall.assertAllowed(uri, rel, "read");
  return { rel, abs: file === "" ? real : path.join(real, file) };
}

function toProtocolError(uri: string): (error: unknown) => never {
  return (error) => {
    throw protocolErrorOf(uri, error);
  };
}

function protocolErrorOf(uri: string, error: unknown): unknown {
  if (!(error instanceof WorkspaceError)) return error;
  if (error.reason === "not-found") return new ResourceNotFoundError(uri, error.message);
  return new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, {
    uri,
    code: error.code,
    reason: error.reason,
    ...(error.rule !== undefined && { rule: error.rule }),
  });
}

function isBinaryMime(mime: string | undefined): boolean {
  if (mime === undefined) return false;
  if (mime === "image/svg+xml") return false;
  return /^(image|audio|video)\//.test(mime) || /^application\/(pdf|zip|gzip|wasm|x-tar)$/.test(mime);
}

function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString("base64url");
}

function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { o?: unknown };
    if (typeof value.o === "number" && Number.isInteger(value.o) && value.o >= 0) return value.o;
  } catch {
    // fall through to the error below
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor ${JSON.stringify(cursor)}`);
}
