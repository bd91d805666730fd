#!/bin/sh
# What the conformance runner spawns for each client scenario (it appends the
# mock server's URL).
here=$(dirname "$0")
exec "$here/../../node_modules/.bin/tsx" "$here/client.ts" "$@"
