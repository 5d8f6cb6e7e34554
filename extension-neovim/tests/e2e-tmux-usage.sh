#!/usr/bin/env bash
# Records, in a real terminal (tmux) against the real binary and the scripted fake model, what a
# person sees of the usage meter: the chat's winbar after a turn whose calls reported usage (a
# check among them), a statusline using the component, and :Bravebot usage. Captures go to
# target/e2e/neovim/uNN-*.txt. Usage: extension-neovim/tests/e2e-tmux-usage.sh [NVIM]
set -euo pipefail
name=e2e-tmux-usage.sh prefix=u
# shellcheck source=extension-neovim/tests/e2e-tmux-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/e2e-tmux-lib.sh"

ws="$tmp/project"
mkdir -p "$ws" "$HOME/.bravebot"
printf 'some notes\n' > "$ws/notes.md"
cat > "$HOME/.bravebot/settings.json" <<'EOF2'
{"model": {"contextTokens": 32000},
 "usage": {"prices": {"fake-model": {"input": 3, "cachedInput": 0.3, "output": 15}}}}
EOF2
chmod 700 "$HOME/.bravebot"

cat > "$tmp/script.json" <<'EOF2'
{"planner": [
  {"tool": "read_file", "id": "call_read", "args": {"path": "notes.md", "why": "read what was asked"}, "usage": {"input": 1000, "output": 20, "cached": 800}},
  {"text": "The notes say: some notes.", "usage": {"input": 1500, "output": 30}}
],
 "check": [{"text": "VERDICT: safe\nplain notes", "usage": {"input": 300, "output": 5}}]}
EOF2
start_fake
install_plugin
cat >> "$XDG_CONFIG_HOME/nvim/init.lua" <<'EOF2'
vim.o.laststatus = 3
vim.o.statusline = '%f %=%{v:lua.require("bravebot.usage").statusline()}'
EOF2

tmux -S "$sock" new-session -d -s e2e -x 140 -y 40 -c "$ws" "$nvim notes.md"
wait_for 'some notes'
keys ':Bravebot chat' Enter
wait_for 'prompt'
keys 'i' 'What do the notes say?' C-s
wait_for 'turn ended'
sleep 0.5
capture winbar-and-statusline
keys Escape ':Bravebot usage' Enter
wait_for 'Protection'
capture usage-command
