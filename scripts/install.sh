#!/usr/bin/env bash
# The README's "build, install and run" command: builds the release binary, installs it, and runs
# one headless turn against the configured model.
#
# Installing is `cargo install --path server --locked --force`: it builds the release profile in this
# workspace's target/ (so a later `cargo build --release` reuses the work) and puts `bravebot` in
# cargo's bin directory (~/.cargo/bin, already on PATH wherever rustup installed Rust). The Neovim
# plugin is linked into Neovim's package path where Neovim is installed, and the VS Code extension
# is packaged as a .vsix and installed where `code` (or `code-server`) and npm are found.
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

# The Neovim plugin: a start package, so a plain Neovim loads it (lazy.nvim users point a spec at
# extension-neovim instead; see its doc/bravebot.txt).
if command -v nvim >/dev/null 2>&1; then
  pack="${XDG_DATA_HOME:-$HOME/.local/share}/nvim/site/pack/bravebot/start"
  mkdir -p "$pack"
  ln -sfn "$PWD/extension-neovim" "$pack/bravebot"
  say "linked the Neovim plugin into $pack (:checkhealth bravebot checks it)"
fi

# The VS Code extension: bundled, packaged and installed into whichever editor is on PATH.
editor=""
for candidate in code code-server codium; do
  if command -v "$candidate" >/dev/null 2>&1; then editor="$candidate"; break; fi
done
if [ -n "$editor" ] && command -v npm >/dev/null 2>&1; then
  say "packaging the VS Code extension and installing it into $editor"
  (cd extension-vscode && npm ci --no-audit --no-fund && npm run --silent build && npm run --silent package)
  "$editor" --install-extension extension-vscode/bravebot.vsix --force
fi

say "running one headless turn: bravebot exec \"Say hello in one sentence.\""
status=0
"$bin" exec "Say hello in one sentence." || status=$?
if [ "$status" -ne 0 ]; then
  printf '\nbravebot is installed, but the headless turn failed (exit %s); see its message above.\n' "$status" >&2
  printf 'If no model answered, point BRAVEBOT_MODEL_URL or `model.baseUrl` in ~/.bravebot/settings.json at an OpenAI-compatible endpoint.\n' >&2
fi
exit "$status"
