// Loader hooks that print each module a process loads, as `module <url>` lines on stderr: files,
// and the `node:` modules that ES modules import.
export async function load(url, context, next) {
  if (url.startsWith("file:") || url.startsWith("node:")) process.stderr.write(`module ${url}\n`);
  return next(url, context);
}
