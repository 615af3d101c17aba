#!/usr/bin/env bash
# Installs, with npm, the two programs the editor tests check the JSON Schema
# that `agentc schema --format jsonschema` writes against: ajv, which
# compiles it in strict mode as JSON Schema draft 2020-12, and the YAML
# language server (the one in the VS Code YAML extension), which marks
# mistakes in YAML manifests with it. Pinned versions, into
# $AGENTC_TOOLS/editor-tools (default: beside the go command's bin
# directory), outside the repository, and kept there: a second run finds
# them and returns at once (the first run takes about 5 seconds: 20
# packages). It prints the directory holding node_modules, which the tests
# read as AGENTC_EDITOR_TOOLS.
set -euo pipefail
ajv=8.17.1
yamlls=1.25.0
dest="${AGENTC_TOOLS:-$(go env GOPATH)/bin}/editor-tools"
want="ajv@$ajv yaml-language-server@$yamlls"
stamp="$dest/versions"
if [ -f "$dest/node_modules/ajv/dist/2020.js" ] &&
  [ -f "$dest/node_modules/yaml-language-server/bin/yaml-language-server" ] &&
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$dest"
  exit 0
fi
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  # Node.js from the distribution's packages, as install-chromium.sh
  # installs Chromium.
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
mkdir -p "$dest"
echo "installing $want into $dest" >&2
# A package.json of its own, so that npm installs here and never into a
# project above.
echo '{"private": true}' > "$dest/package.json"
rm -f "$stamp"
npm install --prefix "$dest" --no-audit --no-fund --omit=dev --save-exact \
  "ajv@$ajv" "yaml-language-server@$yamlls" >&2
echo "$want" > "$stamp"
echo "$dest"
