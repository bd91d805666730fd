// Loader hooks that print each module a process loads, as `module <url>` lines on stderr.
export async function load(url, context, next) {
  if (url.startsWith("file:")) process.stderr.write(`module ${url}\n`);
  return next(url, context);
}
