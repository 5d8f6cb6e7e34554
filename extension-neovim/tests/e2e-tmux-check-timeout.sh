#!/usr/bin/env bash
# Records, in a real terminal (tmux) against the real binary and the scripted fake model, what a
# person sees of a check's time limit (CHECK-31, NVIM-121): a setup() value the server refuses, then
# a limit of 2 s over a check whose model goes quiet, the read's question saying inconclusive, and
# the person refusing it with <Esc>. Captures go to target/e2e/neovim/tNN-*.txt.
# Usage: extension-neovim/tests/e2e-tmux-check-timeout.sh [NVIM]
set -euo pipefail
name=e2e-tmux-check-timeout.sh prefix=t
# shellcheck source=extension-neovim/tests/e2e-tmux-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/e2e-tmux-lib.sh"

ws="$tmp/project"
mkdir -p "$ws/vendor"
printf 'notes nobody vouched for\n' > "$ws/vendor/notes.md"
cat > "$tmp/script.json" <<'EOF2'
{"planner": [
  {"tool": "read_file", "id": "call_read", "args": {"path": "vendor/notes.md", "why": "read what was asked"}},
  {"text": "I could not read it."}
 ],
 "check": [{"stall": "VERDICT: safe\n"}]}
EOF2
start_fake
install_plugin
init="$XDG_CONFIG_HOME/nvim/init.lua"
cp "$init" "$tmp/init.good"

# A value the server does not take: it says so, and the session keeps its own limit.
sed 's/^})$/  vetting = { timeoutSeconds = "soon" },\n})/' "$tmp/init.good" > "$init"
tmux -S "$sock" new-session -d -s e2e -x 140 -y 40 -c "$ws" "$nvim"
keys ':Bravebot chat' Enter
wait_for 'prompt'
sleep 1
keys Escape ':messages' Enter
sleep 0.5
capture bad-value-messages
keys Enter ':Bravebot status' Enter
wait_for 'timeoutSeconds'
capture bad-value-status
keys ':qa!' Enter
sleep 1

# A limit of 2 s over a check whose model goes quiet.
sed 's/^})$/  vetting = { timeoutSeconds = 2 },\n})/' "$tmp/init.good" > "$init"
tmux -S "$sock" kill-server 2>/dev/null || true
tmux -S "$sock" new-session -d -s e2e -x 140 -y 40 -c "$ws" "$nvim"
keys ':Bravebot chat' Enter
wait_for 'prompt'
keys 'i' 'What do the vendor notes say?' C-s
wait_for 'inconclusive'
sleep 1
capture inconclusive-question
keys Escape ':Bravebot answer' Enter
sleep 0.5
keys Escape
wait_for 'turn ended'
sleep 0.5
capture refused
