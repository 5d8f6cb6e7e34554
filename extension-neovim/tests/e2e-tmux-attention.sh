#!/usr/bin/env bash
# Records, in a real terminal (tmux) against the real binary and the scripted fake model, a
# question nobody answers: the statusline component counting it while it waits, the float taken
# down when its time (questions.timeoutSeconds = 4) runs out, the chat saying so and the turn
# going on, and the turn's end notified once Neovim has lost the focus. Captures go to
# target/e2e/neovim/aNN-*.txt.
# Usage: extension-neovim/tests/e2e-tmux-attention.sh [NVIM]
set -euo pipefail
name=e2e-tmux-attention.sh prefix=a
# shellcheck source=extension-neovim/tests/e2e-tmux-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/e2e-tmux-lib.sh"

ws="$tmp/project"
mkdir -p "$ws"
printf 'print("hello")\n' > "$ws/main.py"

cat > "$tmp/script.json" <<'JSON'
{"planner": [
  {"tool": "run", "id": "call_run", "args": {"command": "touch made.txt", "why": "make a file"}},
  {"text": "I went on without making the file."},
  {"tool": "run", "id": "call_run2", "args": {"command": "touch other.txt", "why": "make another"}},
  {"text": "Second turn done."}
]}
JSON
start_fake
install_plugin
# The person's own statusline, holding the component, and a wait of four seconds.
cat >> "$XDG_CONFIG_HOME/nvim/init.lua" <<'LUA'
require('bravebot').setup({
  cmd = require('bravebot.config').options.cmd,
  model = require('bravebot.config').options.model,
  questions = { timeoutSeconds = 4 },
})
vim.o.laststatus = 3
vim.o.statusline = "%f %= %{v:lua.require'bravebot'.statusline()} "
LUA

tmux -S "$sock" new-session -d -s e2e -x 150 -y 45 -c "$ws" "$nvim main.py"
wait_for 'hello'
keys ':Bravebot chat' Enter
wait_for 'prompt'
keys 'i' 'Make the file, please.' C-s
wait_for 'bravebot: 1 question'
capture question-waits-statusline
wait_for 'no longer waiting'
wait_for 'turn ended'
capture timed-out-chat
# A second turn asks again and the person leaves Neovim: a detached tmux has no client whose
# focus could move, so Neovim is given the FocusLost a terminal that reports focus sends. The turn
# ends out of sight, and the notification waits for them on the command line.
keys Escape ':Bravebot ask Once more.' Enter
wait_for 'bravebot: 1 question'
keys ':doautocmd FocusLost' Enter
wait_for 'the turn ended (done)'
capture turn-end-notified
echo "captures in $out:"
ls "$out"/a[0-9][0-9]-*.txt
