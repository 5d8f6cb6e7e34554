#!/usr/bin/env bash
# Records the Neovim plugin as a person meets it, in a real terminal (tmux), against the real
# binary and the scripted fake model: the README's setup (the plugin as a start package, as
# scripts/install.sh links it), a prompt, an edit, a run whose test fails, a cancel mid-stream and
# a model error. Text captures of the screen go to target/e2e/neovim/NN-name.txt, to be read.
# Usage: extension-neovim/tests/e2e-tmux.sh [NVIM]
set -euo pipefail
name=e2e-tmux.sh prefix=
# shellcheck source=extension-neovim/tests/e2e-tmux-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/e2e-tmux-lib.sh"

# A small Python project with a failing test.
ws="$tmp/project"
mkdir -p "$ws"
git -C "$ws" init -q
cat > "$ws/calc.py" <<'EOF'
def add(a, b):
    return a - b


def mul(a, b):
    return a * b
EOF
cat > "$ws/test_calc.py" <<'EOF'
from calc import add, mul

assert mul(2, 3) == 6
assert add(2, 2) == 5, "add(2, 2) should be 5"
print("all tests passed")
EOF

# The model: one reply a turn, in order.
cat > "$tmp/script.json" <<'EOF'
{"planner": [
  {"text": "Hello! I can read, edit and run things here. Ask away.\n\n```python\nprint(\"hi\")\n```\n"},
  {"tool": "edit_file", "id": "call_edit", "args": {"path": "calc.py", "old_text": "    return a - b", "new_text": "    return a + b", "why": "add subtracts instead of adding"}},
  {"text": "Fixed `add`."},
  {"tool": "run", "id": "call_run", "args": {"command": "python3 test_calc.py", "why": "run the tests"}},
  {"text": "The test still fails: it expects add(2, 2) == 5."},
  {"stall": "Let me think about this for a long"},
  {"error": 500, "message": "upstream model overloaded"}
],
"competentCheck": "WORD-"}
EOF
start_fake
install_plugin

tmux -S "$sock" new-session -d -s e2e -x 150 -y 45 -c "$ws" "$nvim calc.py"
wait_for 'def add'
capture editor
keys ':checkhealth bravebot' Enter
wait_for 'version'
capture checkhealth
keys ':q' Enter
keys ':Bravebot chat' Enter
wait_for 'prompt'
capture chat-opened

keys 'i' 'Say hello' C-s
wait_for 'turn ended'
capture prompt-answered

keys Escape 'i' 'Fix add in @calc.py' C-s
wait_for 'a question waits (edit a file'
capture edit-announced
keys Escape ':Bravebot answer' Enter
wait_for 'hunk 1/1'
capture edit-inline
keys '\' 'A'
wait_for 'Fixed'
capture edit-landed

keys ':Bravebot chat' Enter 'i' 'Run the tests' C-s
wait_for 'Run it once'
capture run-question
keys Escape ':Bravebot answer' Enter
sleep 0.5
capture run-question-focused
allow="$(tmux -S "$sock" capture-pane -p -t e2e | grep -o '[0-9]  Run it once' | head -1 | cut -c1)"
keys "$allow"
sleep 0.3
keys Enter
wait_for 'still fails'
capture run-failed

keys ':Bravebot chat' Enter 'i' 'Think hard' C-s
wait_for 'Let me think'
sleep 1.5
capture thinking
keys Escape ':Bravebot cancel' Enter
wait_for 'turn ended: cancelled'
capture cancelled

keys ':Bravebot chat' Enter 'i' 'Try again' C-s
wait_for 'checks the binary'
capture model-error

keys Escape ':Bravebot show ref:' Tab
sleep 0.3
keys Enter
sleep 0.5
capture show-ref
keys q ':Bravebot audit' Enter
sleep 0.5
capture audit
echo "captures in $out:"
ls "$out"/[0-9][0-9]-*.txt
