#!/usr/bin/env bash
# Installs an OpenTelemetry Collector with the OTLP receiver and the file
# exporter, which the telemetry tests export to and read back. It is built
# by the collector's builder from scripts/otelcol-builder.yaml (every
# module pinned, from the Go module proxy; no cgo) into $AGENTC_TOOLS
# (default: the go command's bin directory), and kept there: a second run
# finds it and returns at once. It prints the program's path.
set -euo pipefail
builder_version=0.165.0
manifest="$(cd "$(dirname "$0")" && pwd)/otelcol-builder.yaml"
dest="${AGENTC_TOOLS:-$(go env GOPATH)/bin}"
prog="$dest/otelcol-agentc"
# The stamp beside the program is the digest of the manifest it was built
# from (and the builder's version): a changed manifest builds it again.
want="$builder_version $(sha256sum "$manifest" | cut -d' ' -f1)"
stamp="$dest/otelcol-agentc.version"
if [ -x "$prog" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$prog"
  exit 0
fi
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)" # the build runs elsewhere
prog="$dest/otelcol-agentc" stamp="$dest/otelcol-agentc.version"
echo "building the OpenTelemetry Collector (otelcol-agentc, builder $builder_version) into $dest" >&2
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
GOBIN="$scratch" go install "go.opentelemetry.io/collector/cmd/builder@v$builder_version" >&2
# The builder writes the program's sources; its modules are required here,
# at the manifest's versions, and only what the program imports is
# fetched and built (the builder's own step, go mod tidy, would fetch the
# modules of every dependency's tests too).
"$scratch/builder" --config "$manifest" --skip-get-modules --skip-compilation >&2
cd otelcol-agentc
go mod init agentc.dev/otelcol-agentc >&2
# shellcheck disable=SC2046 # one argument a module
go get $(sed -n 's/^ *-\{0,1\} *gomod: *\([^ ]*\) \(v[^ ]*\)$/\1@\2/p' "$manifest") \
  "go.opentelemetry.io/collector/otelcol@v$builder_version" >&2
# -mod=mod adds what the packages built need beyond what go get fetched,
# within the versions the manifest pins.
CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags="-s -w" -o "$prog" .
echo "$want" > "$stamp"
echo "$prog"
