#!/usr/bin/env bash
# The README's "build, install and run" command: builds the release binary, installs it, and runs
# one headless turn against the configured model.
#
# Installing is `cargo install --path server --locked --force`: it builds the release profile in this
# workspace's target/ (so a later `cargo build --release` reuses the work) and puts `bravebot` in
# cargo's bin directory (~/.cargo/bin, already on PATH wherever rustup installed Rust). The Neovim
# plugin and the VS Code extension are installed here too once they exist.
#
# The model is whatever the settings say: BRAVEBOT_MODEL_URL, else `model.baseUrl` in
# ~/.bravebot/settings.json, else a local OpenAI-compatible server at http://127.0.0.1:11434/v1.
# When nothing answers, `bravebot exec` says which setting to change; this script passes its exit
# code through.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '\n== %s\n' "$*" >&2; }

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || {
  printf 'scripts/install.sh: cargo not found: install Rust 1.85 or newer with rustup (https://rustup.rs), then run this again\n' >&2
  exit 1
}

say "building and installing bravebot (release)"
cargo install --path server --locked --force
bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin/bravebot"
say "installed $("$bin" --version) at $bin"
case ":$PATH:" in
  *":$(dirname "$bin"):"*) ;;
  *) printf 'note: %s is not on PATH; add it to run `bravebot` by name\n' "$(dirname "$bin")" >&2 ;;
esac

say "running one headless turn: bravebot exec \"Say hello in one sentence.\""
status=0
"$bin" exec "Say hello in one sentence." || status=$?
if [ "$status" -ne 0 ]; then
  printf '\nbravebot is installed, but the headless turn failed (exit %s); see its message above.\n' "$status" >&2
  printf 'If no model answered, point BRAVEBOT_MODEL_URL or `model.baseUrl` in ~/.bravebot/settings.json at an OpenAI-compatible endpoint.\n' >&2
fi
exit "$status"
