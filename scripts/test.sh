#!/usr/bin/env bash
# The tests, as CI runs them (.ci/run): the module's tidiness, gofmt, go vet,
# every test with the race detector, and the benchmark harness in its short
# mode (which never fails on timings). The race detector makes the
# command-line scripts slow, so the tests get more than go test's default ten
# minutes. The Temporal tests start the Temporal dev server from the program
# scripts/install-temporal.sh installs, the tests of agentc view's page
# open it in the headless Chromium that scripts/install-chromium.sh installs
# from the distribution's packages, the editor tests check the editor's
# JSON Schema with ajv and the YAML language server, which
# scripts/install-editor-tools.sh installs with npm, the tests of agentc
# serve run the MCP Inspector's command-line client, which
# scripts/install-mcp-inspector.sh installs with npm, and the telemetry
# scenario exports to the OpenTelemetry Collector that
# scripts/install-otelcol.sh builds. Here all fail, rather than skip, when
# their program is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
AGENTC_TEMPORAL_CLI="$(bash scripts/install-temporal.sh)"
export AGENTC_TEMPORAL_CLI AGENTC_REQUIRE_TEMPORAL=1
AGENTC_CHROMIUM="$(bash scripts/install-chromium.sh)"
export AGENTC_CHROMIUM AGENTC_REQUIRE_CHROMIUM=1
AGENTC_EDITOR_TOOLS="$(bash scripts/install-editor-tools.sh)"
export AGENTC_EDITOR_TOOLS AGENTC_REQUIRE_EDITOR_TOOLS=1
AGENTC_MCP_INSPECTOR="$(bash scripts/install-mcp-inspector.sh)"
export AGENTC_MCP_INSPECTOR AGENTC_REQUIRE_MCP_INSPECTOR=1
AGENTC_OTELCOL="$(bash scripts/install-otelcol.sh)"
export AGENTC_OTELCOL AGENTC_REQUIRE_OTELCOL=1
go mod tidy -diff
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
  echo "gofmt would change these files:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
# Every package builds for macOS too: a call that exists only on Linux,
# outside a file built for Linux alone, would break go install there.
GOOS=darwin GOARCH=arm64 go build -o /dev/null ./...
# bench/peer, the benchmarks' Genkit program, is a module of its own.
(cd bench/peer && go mod tidy -diff && go vet ./... && go test ./...)
# A program built with the race detector sleeps a second as it exits
# (GORACE's atexit_sleep_ms): every test binary, and every agentc and
# helper a test starts, did. Races are still reported and fail the test.
export GORACE="${GORACE:-atexit_sleep_ms=0}"
go test -race -timeout 25m ./...
# The CUE child's resource limits once more without the race detector,
# whose own memory leaves no room for the test of a user's tighter limit.
go test ./internal/leaf/cueproc
bash bench/run.sh --short
