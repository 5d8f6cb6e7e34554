# Sourced by scripts/install.sh: finds the Neovim and the VS Code a person has, on PATH or in the
# places their installers put them, and, failing those, the copies scripts/test.sh put in this
# checkout. Defines two functions and sets variables; prints nothing.
#
#   find_neovim   sets NVIM_BIN (the program), NVIM_WHERE (how it was found, in words) and
#                 NVIM_PACK (the package directory that Neovim loads start packages from).
#   find_vscode   sets VSCODE_CMD (an array: the command that takes --install-extension) and
#                 VSCODE_WHERE (how it was found, in words).
#   find_npm      sets NPM_CMD (an array) and NPM_WHERE.
#
# Each leaves its variables empty when nothing is found. CHECKOUT (this checkout's root) must be
# set. BRAVEBOT_FIND_ROOT, empty unless a test sets it, is put before every system location
# (/usr, /opt, /snap, /var/lib/flatpak) so the search can be tried on a made-up tree; PATH and HOME
# are used as they are.

# The first executable among the arguments (globs already expanded by the caller).
first_executable() {
  local candidate
  for candidate in "$@"; do
    if [ -f "$candidate" ] && [ -x "$candidate" ]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

find_neovim() {
  local root=${BRAVEBOT_FIND_ROOT:-} found
  NVIM_BIN="" NVIM_WHERE="" NVIM_PACK="${XDG_DATA_HOME:-$HOME/.local/share}/nvim/site/pack/bravebot/start"
  if found=$(command -v nvim 2>/dev/null) && [ -n "$found" ]; then
    NVIM_BIN=$found NVIM_WHERE="on PATH"
    return 0
  fi
  # Debian and Fedora packages, a source build, the release tarball unpacked in /opt (as its
  # instructions say), a per-user install, bob's shims, Homebrew on Linux, snap.
  shopt -s nullglob
  if found=$(first_executable \
    "$root/usr/local/bin/nvim" "$root/usr/bin/nvim" \
    "$root"/opt/nvim*/bin/nvim "$root"/opt/nvim*/usr/bin/nvim \
    "$HOME/.local/bin/nvim" "$HOME/bin/nvim" "$HOME/.local/share/bob/nvim-bin/nvim" \
    "$root/home/linuxbrew/.linuxbrew/bin/nvim" "$HOME/.linuxbrew/bin/nvim" \
    "$root/snap/bin/nvim"); then
    shopt -u nullglob
    NVIM_BIN=$found NVIM_WHERE="at $found (not on PATH)"
    return 0
  fi
  shopt -u nullglob
  # Flatpak's Neovim keeps its data under ~/.var/app, so its package path is there.
  if found=$(first_executable \
    "$HOME/.local/share/flatpak/exports/bin/io.neovim.nvim" \
    "$root/var/lib/flatpak/exports/bin/io.neovim.nvim"); then
    NVIM_BIN=$found NVIM_WHERE="as the Flatpak io.neovim.nvim ($found)"
    NVIM_PACK="$HOME/.var/app/io.neovim.nvim/data/nvim/site/pack/bravebot/start"
    return 0
  fi
  if found=$(first_executable "$CHECKOUT/.venv/bin/nvim"); then
    NVIM_BIN=$found
    NVIM_WHERE="only as this checkout's own copy, which scripts/test.sh installed for its tests (start it as $found to use the plugin)"
    return 0
  fi
  return 1
}

find_vscode() {
  local root=${BRAVEBOT_FIND_ROOT:-} found name
  VSCODE_CMD=() VSCODE_WHERE=""
  for name in code code-insiders codium code-server; do
    if found=$(command -v "$name" 2>/dev/null) && [ -n "$found" ]; then
      VSCODE_CMD=("$found") VSCODE_WHERE="$name on PATH"
      return 0
    fi
  done
  # Microsoft's .deb and .rpm, the tarball, Arch's package, snap, Flatpak (system and per-user),
  # VSCodium's packages, code-server's .deb and its standalone install in ~/.local.
  shopt -s nullglob
  if found=$(first_executable \
    "$root/usr/bin/code" "$root/usr/share/code/bin/code" "$root/usr/local/bin/code" \
    "$root/opt/visual-studio-code/bin/code" "$root"/opt/VSCode-linux-*/bin/code \
    "$root/snap/bin/code" \
    "$root/var/lib/flatpak/exports/bin/com.visualstudio.code" \
    "$HOME/.local/share/flatpak/exports/bin/com.visualstudio.code" \
    "$root/usr/bin/codium" "$root/usr/share/codium/bin/codium" "$root/snap/bin/codium" \
    "$root/var/lib/flatpak/exports/bin/com.vscodium.codium" \
    "$HOME/.local/share/flatpak/exports/bin/com.vscodium.codium" \
    "$root/usr/bin/code-server" "$root/usr/lib/code-server/bin/code-server" \
    "$HOME/.local/bin/code-server" "$HOME"/.local/lib/code-server-*/bin/code-server); then
    shopt -u nullglob
    VSCODE_CMD=("$found") VSCODE_WHERE="$found (not on PATH)"
    return 0
  fi
  shopt -u nullglob
  # scripts/test.sh's code-server runs on the Node it put beside it.
  local node="$CHECKOUT/.tools/node24/bin/node"
  local entry="$CHECKOUT/.tools/code-server/node_modules/code-server/out/node/entry.js"
  if [ -x "$node" ] && [ -f "$entry" ]; then
    VSCODE_CMD=("$node" "$entry")
    VSCODE_WHERE="only this checkout's own code-server, which scripts/test.sh installed for its tests (start it as $node $entry; it keeps extensions in ~/.local/share/code-server)"
    return 0
  fi
  return 1
}

find_npm() {
  local found
  NPM_CMD=() NPM_WHERE=""
  if found=$(command -v npm 2>/dev/null) && [ -n "$found" ]; then
    NPM_CMD=("$found") NPM_WHERE="on PATH"
    return 0
  fi
  if [ -x "$CHECKOUT/.tools/node24/bin/npm" ] && [ -x "$CHECKOUT/.tools/node24/bin/node" ]; then
    NPM_CMD=("$CHECKOUT/.tools/node24/bin/npm")
    NPM_WHERE="this checkout's own Node (.tools/node24, which scripts/test.sh installed)"
    return 0
  fi
  return 1
}
