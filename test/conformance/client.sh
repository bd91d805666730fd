#!/bin/sh
# What the conformance runner spawns for each client scenario (it appends the
# mock server's URL). The runner starts some forty of these at once; on two cores
# they run niced, so that the tests running beside the suite keep their share of
# the CPU (each client still has the runner's 60 s).
here=$(dirname "$0")
exec nice -n 10 "$here/../../node_modules/.bin/tsx" "$here/client.ts" "$@"
