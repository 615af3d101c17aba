#!/usr/bin/env bash
# Installs the Temporal command-line program, whose development server is
# the real Temporal server the tests run agentc's workers against. It is
# built from the Go module proxy (no cgo; about 3 minutes on 2 cores with
# an empty build cache) into $AGENTC_TOOLS (default: the go command's bin
# directory), and kept there: a second run finds it and returns at once.
# It prints the program's path.
set -euo pipefail
version=1.5.1
dest="${AGENTC_TOOLS:-$(go env GOPATH)/bin}"
prog="$dest/temporal"
# A program built by go install says its version is 0.0.0-DEV: a stamp
# beside it says which it is.
stamp="$dest/temporal.version"
if [ -x "$prog" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
  echo "$prog"
  exit 0
fi
mkdir -p "$dest"
echo "installing the temporal program $version into $dest" >&2
GOBIN="$dest" go install "github.com/temporalio/cli/cmd/temporal@v$version" >&2
echo "$version" > "$stamp"
echo "$prog"
