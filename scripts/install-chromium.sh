#!/usr/bin/env bash
# Installs Chromium from the distribution's packages (Debian's chromium), for
# the tests that render agentc view's page in a headless browser. A second
# run finds /usr/bin/chromium and returns at once. It prints the program's
# path.
set -euo pipefail
prog=/usr/bin/chromium
if [ -x "$prog" ]; then
  echo "$prog"
  exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi
echo "installing chromium from the distribution's packages" >&2
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y --no-install-recommends chromium >&2; then
  # The package lists may be missing or stale on a fresh machine.
  "${sudo[@]}" apt-get update >&2
  "${sudo[@]}" apt-get install -y --no-install-recommends chromium >&2
fi
echo "$prog"
