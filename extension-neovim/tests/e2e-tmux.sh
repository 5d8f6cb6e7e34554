#!/usr/bin/env bash
# Records the Neovim plugin as a person meets it, in a real terminal (tmux), against the real
# binary and the scripted fake model: the README's setup (the plugin as a start package, as
# scripts/install.sh links it), a prompt, an edit, a run whose test fails, a cancel mid-stream and
# a model error. Text captures of the screen go to target/e2e/neovim/NN-name.txt, to be read.
# Usage: extension-neovim/tests/e2e-tmux.sh [NVIM]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
nvim="${1:-$root/.venv/bin/nvim}"
out="$root/target/e2e/neovim"
bravebot="$root/target/debug/bravebot"
fake="$root/target/debug/fake_model_server"
for f in "$nvim" "$bravebot" "$fake"; do
  [ -x "$f" ] || { echo "e2e-tmux.sh: $f not found (cargo build; .venv for nvim)" >&2; exit 1; }
done
command -v tmux >/dev/null || { echo "e2e-tmux.sh: tmux not found" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/[0-9][0-9]-*.txt
tmp="$(mktemp -d)"
sock="$tmp/tmux.sock"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null || true
  [ -n "${fake_pid:-}" ] && kill "$fake_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" \
  XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
mkdir -p "$HOME" "$XDG_CONFIG_HOME/nvim" "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
unset BRAVEBOT_MODEL_URL BRAVEBOT_MODEL BRAVEBOT_MODEL_API BRAVEBOT_API_KEY

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
]}
EOF
# The fake model serves until its stdin closes: keep a writer open on a fifo.
mkfifo "$tmp/fake.in"
"$fake" "$tmp/script.json" "$tmp/requests.json" < "$tmp/fake.in" > "$tmp/fake.out" &
fake_pid=$!
exec 3> "$tmp/fake.in"
for _ in $(seq 1 100); do grep -q http "$tmp/fake.out" 2>/dev/null && break; sleep 0.1; done
url="$(grep -o 'http[^ ]*' "$tmp/fake.out" | head -1)"

# The README's setup: the plugin linked as a start package, setup() with the model.
mkdir -p "$XDG_DATA_HOME/nvim/site/pack/bravebot/start"
ln -s "$root/extension-neovim" "$XDG_DATA_HOME/nvim/site/pack/bravebot/start/bravebot"
cat > "$XDG_CONFIG_HOME/nvim/init.lua" <<EOF
require('bravebot').setup({
  cmd = { '$bravebot', 'lsp' },
  model = { api = 'openai', baseUrl = '$url', name = 'fake-model' },
})
EOF

n=0
capture() {
  n=$((n + 1))
  tmux -S "$sock" capture-pane -p -t e2e > "$out/$(printf '%02d' "$n")-$1.txt"
}
# Waits (bounded) until the screen shows `text`; a recording, not a test: it goes on either way.
wait_for() {
  for _ in $(seq 1 150); do
    tmux -S "$sock" capture-pane -p -t e2e | grep -qF -- "$1" && return 0
    sleep 0.2
  done
  echo "e2e-tmux.sh: the screen never showed: $1" >&2
}
keys() { tmux -S "$sock" send-keys -t e2e "$@"; }

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
wait_for 'question (edit)'
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
