#!/bin/sh
# What the conformance runner spawns for each client scenario (it appends the
# mock server's URL). OAuth is not implemented yet, so auth scenarios fail here
# at once instead of starting a TypeScript runtime just to fail: a requirement
# run starts some thirty of them in parallel, on two cores.
case "$MCP_CONFORMANCE_SCENARIO" in
  auth/*)
    echo "mcplex conformance client: $MCP_CONFORMANCE_SCENARIO needs OAuth, which mcplex does not implement yet" >&2
    exit 1
    ;;
esac
here=$(dirname "$0")
exec "$here/../../node_modules/.bin/tsx" "$here/client.ts" "$@"
