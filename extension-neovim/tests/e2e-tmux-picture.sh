#!/usr/bin/env bash
# Records, in a real terminal (tmux) against the real binary and the scripted fake model, what a
# person sees of a picture the agent asks to see: the vetContent float naming the private copy with
# its type, size and the check's word, and the key that opens it (NVIM-104). `vim.ui.open` is
# replaced by a note of the path, since a terminal test has no desktop viewer. Captures go to
# target/e2e/neovim/pNN-*.txt.
# Usage: extension-neovim/tests/e2e-tmux-picture.sh [NVIM]
set -euo pipefail
name=e2e-tmux-picture.sh prefix=p
# shellcheck source=extension-neovim/tests/e2e-tmux-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/e2e-tmux-lib.sh"

ws="$tmp/project"
mkdir -p "$ws"
printf '\211PNG\r\n\032\nwords drawn in a picture\n' > "$ws/shot.png"
printf 'print("hello")\n' > "$ws/main.py"

cat > "$tmp/script.json" <<'EOF'
{"planner": [
  {"tool": "read_file", "id": "call_read", "args": {"path": "shot.png", "why": "see the screenshot"}},
  {"tool": "vet_content", "id": "call_vet", "args": {"ref": "ref:0", "expects": "a screenshot of the build page", "why": "to read the error on it"}},
  {"text": "The screenshot was kept back."}
],
"check": [{"text": "VERDICT: safe\nan ordinary screenshot of a build page"}]}
EOF
start_fake
install_plugin

tmux -S "$sock" new-session -d -s e2e -x 150 -y 50 -c "$ws" "$nvim main.py"
wait_for 'hello'
keys ':lua vim.ui.open = function(p) vim.notify("opened " .. p) return { wait = function() end } end' Enter
keys ':Bravebot chat' Enter
wait_for 'prompt'
keys 'i' 'What does the screenshot say?' C-s
wait_for 'copy: '
sleep 1
capture picture-question
keys Escape ':Bravebot answer' Enter
sleep 0.5
keys 'o'
wait_for 'opened '
capture picture-opened
keys Enter
wait_for 'kept back'
sleep 0.5
capture picture-kept-back
echo "captures in $out:"
ls "$out"/p[0-9][0-9]-*.txt
