#!/usr/bin/env bash
# Installs, with npm, the MCP Inspector (@modelcontextprotocol/inspector),
# whose command-line client the tests run against `agentc serve`: it lists
# the served tools and calls one, as an MCP client from outside this
# repository. A pinned version, into $AGENTC_TOOLS/mcp-inspector (default:
# beside the go command's bin directory), outside the repository, and kept
# there: a second run finds it and returns at once. The Inspector wants
# Node.js 22.19 or later; where the node on the PATH is older, a pinned
# Node.js 22 comes with it, from the npm registry's node-linux-ARCH
# package, into the same node_modules (its .bin/node, which the tests run
# the Inspector with when it is there). It prints the directory holding
# node_modules, which the tests read as AGENTC_MCP_INSPECTOR.
set -euo pipefail
inspector=2.12.0
node22=22.23.5
dest="${AGENTC_TOOLS:-$(go env GOPATH)/bin}/mcp-inspector"
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  # Node.js from the distribution's packages, as install-editor-tools.sh
  # installs it.
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
  fi
  echo "installing node and npm from the distribution's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get install -y --no-install-recommends nodejs npm >&2; then
    "${sudo[@]}" apt-get update >&2
    "${sudo[@]}" apt-get install -y --no-install-recommends nodejs npm >&2
  fi
fi
want="@modelcontextprotocol/inspector@$inspector"
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)'; then
  case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *)
    echo "node $(node --version) is older than the MCP Inspector needs (22.19), and npm has no Node.js for $(uname -m)" >&2
    exit 1
    ;;
  esac
  want="$want node-linux-$arch@$node22"
fi
stamp="$dest/versions"
if [ -f "$dest/node_modules/.bin/mcp-inspector" ] &&
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$dest"
  exit 0
fi
mkdir -p "$dest"
echo "installing $want into $dest" >&2
# A package.json of its own, so that npm installs here and never into a
# project above; what an earlier run installed goes first.
echo '{"private": true}' > "$dest/package.json"
rm -rf "$stamp" "$dest/node_modules" "$dest/package-lock.json"
# shellcheck disable=SC2086 # $want is a list of package specs
npm install --prefix "$dest" --no-audit --no-fund --omit=dev --ignore-scripts --save-exact $want >&2
echo "$want" > "$stamp"
echo "$dest"
