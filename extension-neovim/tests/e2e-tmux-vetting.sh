#!/usr/bin/env bash
# Records, in a real terminal (tmux) against the real binary and the scripted fake model, what a
# person sees of auto-vetting: a readOutput question under a clean check offering the standing key,
# the chat and winbar once it is chosen, `:Bravebot vetting off` said where it happened, and a new
# session opened with the mode on saying so in its first line. Captures go to
# target/e2e/neovim/aNN-*.txt.
# Usage: extension-neovim/tests/e2e-tmux-vetting.sh [NVIM]
set -euo pipefail
name=e2e-tmux-vetting.sh prefix=a
# shellcheck source=extension-neovim/tests/e2e-tmux-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/e2e-tmux-lib.sh"

ws="$tmp/project"
mkdir -p "$ws"
printf 'print("hello")\n' > "$ws/main.py"

cat > "$tmp/script.json" <<'EOF'
{"planner": [
  {"tool": "run", "id": "call_run", "args": {"command": "sh -c 'echo build ok'", "why": "build it"}},
  {"tool": "read_output", "id": "call_read", "args": {"ref": "ref:0", "why": "see the build log"}},
  {"text": "The build printed build ok."}
],
"check": [{"text": "VERDICT: safe\nplain build output"}]}
EOF
start_fake
install_plugin

tmux -S "$sock" new-session -d -s e2e -x 150 -y 50 -c "$ws" "$nvim main.py"
wait_for 'hello'
keys ':Bravebot chat' Enter
wait_for 'prompt'
keys 'i' 'Build it and read the log' C-s
answer 'Run it once'
wait_for 'a question waits (read a program'
keys Escape ':Bravebot answer' Enter
wait_for 'from now on let a clean check answer for me'
sleep 0.5
capture standing-key-offered
pick="$(tmux -S "$sock" capture-pane -p -t e2e | grep -o "[0-9]  Show it, and from now on" | head -1 | cut -c1)"
keys "$pick"
sleep 0.3
keys Enter
wait_for 'turn ended'
sleep 0.5
capture mode-on-in-chat-and-winbar
keys Escape ':Bravebot vetting off' Enter
wait_for 'auto-vetting is now off'
sleep 0.5
capture mode-off
keys Escape ':Bravebot vetting on' Enter
wait_for 'auto-vetting is now on'
keys Escape ':Bravebot new' Enter
sleep 1
keys Escape ':Bravebot chat' Enter
sleep 1
capture new-session-banner
echo "record: $(cat "$HOME/.bravebot/vetting")"
echo "captures in $out:"
ls "$out"/a[0-9][0-9]-*.txt
