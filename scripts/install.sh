#!/usr/bin/env bash
# The README's install command: builds and installs `bravebot`, wires it into the editors found on
# this machine, and checks that a model answers.
#
#   1. `cargo install --path server --locked --force` builds the release profile in this
#      workspace's target/ and puts `bravebot` in cargo's bin directory (~/.cargo/bin).
#   2. The Neovim plugin is linked into Neovim's package path when a Neovim is found: `nvim` on
#      PATH, else in the usual places (/usr/local/bin, /usr/bin, /opt/nvim*, ~/.local/bin, ~/bin,
#      bob, Homebrew, snap, Flatpak), else this checkout's own .venv/bin/nvim that
#      scripts/test.sh installed (the script says which); otherwise one line says how to link it.
#   3. The VS Code extension is packaged as a .vsix and installed into the first of `code`,
#      `code-insiders`, `codium`, `code-server` found on PATH, else in the usual places (the .deb
#      and .rpm, /opt, snap, Flatpak, code-server's .deb and ~/.local install), else this
#      checkout's own .tools/code-server; npm comes from PATH or this checkout's .tools/node24.
#      Otherwise one line says how.
#   4. `bravebot doctor` says whether the configured model answers. When it does, one headless turn
#      runs against it and its exit code is this script's. When it does not, bravebot is installed
#      and only the model is missing: the scripted demonstration (`bravebot demo`, in builds that
#      have it) shows a turn without a model, the script says how to configure one, and exits 0.
#
# Ends with what it did and what it skipped. Exits non-zero only when bravebot itself could not be
# built or installed, or when a configured model answered but the turn against it failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '\n== %s\n' "$*" >&2; }
did=()
skipped=()
summary() {
  printf '\nWhat scripts/install.sh did:\n' >&2
  local line
  for line in "${did[@]}"; do printf '  done:    %s\n' "$line" >&2; done
  for line in "${skipped[@]}"; do printf '  skipped: %s\n' "$line" >&2; done
}

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || {
  printf 'scripts/install.sh: cargo not found: install Rust 1.85 or newer with rustup (https://rustup.rs), then run this again\n' >&2
  exit 1
}

say "building and installing bravebot (release build, a few minutes the first time)"
cargo install --path server --locked --force
bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin/bravebot"
say "installed $("$bin" --version) at $bin"
did+=("installed $("$bin" --version) at $bin")
case ":$PATH:" in
  *":$(dirname "$bin"):"*) ;;
  *)
    printf 'note: %s is not on PATH; add it to run `bravebot` by name\n' "$(dirname "$bin")" >&2
    skipped+=("adding $(dirname "$bin") to PATH (do it in your shell's profile)")
    ;;
esac

# Where the editors are: on PATH, in the places their installers put them, or (failing those)
# the copies scripts/test.sh put in this checkout. scripts/find-editors.sh lists the places.
CHECKOUT=$PWD
# shellcheck source=scripts/find-editors.sh
. scripts/find-editors.sh

# The Neovim plugin: a start package, so a plain Neovim loads it (lazy.nvim users point a spec at
# extension-neovim instead; see its doc/bravebot.txt).
if find_neovim; then
  pack=$NVIM_PACK
  mkdir -p "$pack"
  ln -sfn "$PWD/extension-neovim" "$pack/bravebot"
  say "found Neovim $NVIM_WHERE; linked the Neovim plugin into $pack (:checkhealth bravebot checks it)"
  did+=("linked the Neovim plugin into $pack, for the Neovim found $NVIM_WHERE")
else
  pack=$NVIM_PACK
  skipped+=("the Neovim plugin (no Neovim on PATH or in the usual places); later: mkdir -p $pack && ln -sfn $PWD/extension-neovim $pack/bravebot")
fi

# The VS Code extension: bundled, packaged and installed into the editor found.
by_hand="cd extension-vscode && npm ci && npm run package && code --install-extension bravebot.vsix"
if ! find_vscode; then
  skipped+=("the VS Code extension (no code, code-insiders, codium or code-server on PATH or in the usual places); later: $by_hand")
elif ! find_npm; then
  skipped+=("the VS Code extension for ${VSCODE_CMD[*]} (npm is needed to build it); with npm: $by_hand")
else
  say "found VS Code: $VSCODE_WHERE; packaging the extension (npm $NPM_WHERE) and installing it"
  # The checkout's npm runs on the checkout's Node, which is then first on PATH for the build.
  npm_path=$PATH
  [ "${NPM_CMD[0]}" = "$CHECKOUT/.tools/node24/bin/npm" ] && npm_path="$CHECKOUT/.tools/node24/bin:$PATH"
  (cd extension-vscode && PATH=$npm_path "${NPM_CMD[@]}" ci --no-audit --no-fund \
    && PATH=$npm_path "${NPM_CMD[@]}" run --silent package)
  "${VSCODE_CMD[@]}" --install-extension extension-vscode/bravebot.vsix --force
  did+=("installed the VS Code extension into $VSCODE_WHERE")
fi

# Does a model answer? doctor probes the configured endpoint and says so on its "model answers:"
# line; nothing else decides it here.
say "asking bravebot doctor whether the configured model answers"
report=$("$bin" doctor 2>&1) || true
printf '%s\n' "$report" | grep -E '^(model backend|credential|model answers):' >&2 || printf '%s\n' "$report" >&2

if printf '%s\n' "$report" | grep -q '^model answers: yes'; then
  say "running one headless turn: bravebot exec \"Say hello in one sentence.\""
  status=0
  "$bin" exec "Say hello in one sentence." || status=$?
  if [ "$status" -eq 0 ]; then
    did+=("ran one headless turn against the configured model")
  else
    printf '\nbravebot is installed and the model answered the probe, but the turn failed (exit %s); see its message above.\n' "$status" >&2
    skipped+=("a successful headless turn (it failed with exit $status; \`bravebot doctor\` shows what is configured)")
  fi
  summary
  exit "$status"
fi

# No model answers: bravebot is installed, and only the model is missing. Show the scripted
# demonstration where this build has it; a build without the subcommand answers `demo` with its
# usage text and exit code 2, which is not an error of this install.
say "no model answers; running the scripted demonstration: bravebot demo"
demo_err=$(mktemp)
trap 'rm -f "$demo_err"' EXIT
demo_status=0
"$bin" demo 2>"$demo_err" || demo_status=$?
if [ "$demo_status" -eq 2 ] && head -n 1 "$demo_err" | grep -q '^usage: bravebot'; then
  printf 'This build of bravebot has no demo yet.\n' >&2
  skipped+=("the demonstration turn (this build has no \`bravebot demo\`)")
else
  cat "$demo_err" >&2
  if [ "$demo_status" -eq 0 ]; then
    did+=("ran the scripted demonstration (bravebot demo)")
  else
    skipped+=("the demonstration turn (bravebot demo failed with exit $demo_status; see above)")
  fi
fi
skipped+=("a turn against a model (none answers yet)")

cat >&2 <<'EOF'

bravebot is installed; only the model is missing. To configure one, point bravebot at an
OpenAI-compatible or Anthropic endpoint through the environment or ~/.bravebot/settings.json:

  export BRAVEBOT_MODEL_URL=https://api.openai.com/v1 BRAVEBOT_MODEL=gpt-4.1 BRAVEBOT_API_KEY=sk-...
  # or a local Ollama: ollama serve & ollama pull llama3.2 (the defaults need nothing else)

then run `bravebot doctor`: its "model answers:" line says whether the model answers and which
setting to change when it does not.
EOF
summary
exit 0
