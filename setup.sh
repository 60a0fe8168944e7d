#!/usr/bin/env bash
# Installs everything cyclebench needs on a fresh Debian machine of ours: apt packages,
# the Python package (editable, with test extras) and the C runner (cyclebench/runner/). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
pkgs=$(grep -v '^\s*#' apt-packages.txt | xargs)
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check -e '.[test]'
# bytecode ahead of time: where PYTHONDONTWRITEBYTECODE is set, every start would compile the package again
python3 -m compileall -q cyclebench >/dev/null
# the runner is built into the cache now, so the first measurement does not wait for it
python3 -c "from cyclebench.runner.build import runner_path; runner_path()"
