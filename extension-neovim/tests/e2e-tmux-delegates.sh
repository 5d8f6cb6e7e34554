#!/usr/bin/env bash
# Records two reader delegates as a person meets them in a real terminal (tmux), against the real
# binary and the scripted fake model: the start questions, each delegate's own question naming
# who asks, the lines per delegate in the chat, `:Bravebot status` while one waits, and the
# reports. Text captures go to target/e2e/neovim/dNN-name.txt, to be read.
# Usage: extension-neovim/tests/e2e-tmux-delegates.sh [NVIM]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
nvim="${1:-$root/.venv/bin/nvim}"
out="$root/target/e2e/neovim"
bravebot="$root/target/debug/bravebot"
fake="$root/target/debug/fake_model_server"
for f in "$nvim" "$bravebot" "$fake"; do
  [ -x "$f" ] || { echo "e2e-tmux-delegates.sh: $f not found (cargo build; .venv for nvim)" >&2; exit 1; }
done
command -v tmux >/dev/null || { echo "e2e-tmux-delegates.sh: tmux not found" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/d[0-9][0-9]-*.txt
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

ws="$tmp/project"
mkdir -p "$ws/vendor"
printf 'WORD-ALPHA and more\n' > "$ws/alpha.txt"
printf 'WORD-BETA and more\n' > "$ws/vendor/beta.txt"

# The turn fans out two readers; each delegate's replies are picked by a word in its task, and
# the check passes what holds WORD- (so both files read as clean text).
cat > "$tmp/script.json" <<'EOF'
{"planner": [
  {"tool": "spawn_agent", "id": "fan", "args": {"kind": "reader", "task": "Read the file named below and say its first word.", "each": ["alpha.txt", "vendor/beta.txt"], "why": "read two files side by side"}},
  {"text": "waiting for the readers"},
  {"text": "both reported"}
],
"delegateWhen": [
  {"needle": "alpha.txt", "replies": [
    {"tool": "read_file", "id": "call_a", "args": {"path": "alpha.txt", "why": "read alpha"}},
    {"text": "alpha.txt begins with WORD-ALPHA"}]},
  {"needle": "vendor/beta.txt", "replies": [
    {"tool": "read_file", "id": "call_b", "args": {"path": "vendor/beta.txt", "why": "read beta"}},
    {"tool": "vet_content", "id": "call_v", "args": {"ref": "ref:0", "expects": "the first word of the file", "why": "see beta"}},
    {"text": "vendor/beta.txt begins with WORD-BETA"}]}
],
"competentCheck": "WORD-"}
EOF
mkfifo "$tmp/fake.in"
"$fake" "$tmp/script.json" "$tmp/requests.json" < "$tmp/fake.in" > "$tmp/fake.out" &
fake_pid=$!
exec 3> "$tmp/fake.in"
for _ in $(seq 1 100); do grep -q http "$tmp/fake.out" 2>/dev/null && break; sleep 0.1; done
url="$(grep -o 'http[^ ]*' "$tmp/fake.out" | head -1)"

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
  tmux -S "$sock" capture-pane -p -t e2e > "$out/d$(printf '%02d' "$n")-$1.txt"
}
wait_for() {
  for _ in $(seq 1 150); do
    tmux -S "$sock" capture-pane -p -t e2e | grep -qF -- "$1" && return 0
    sleep 0.2
  done
  echo "e2e-tmux-delegates.sh: the screen never showed: $1" >&2
}
keys() { tmux -S "$sock" send-keys -t e2e "$@"; }
# Answers the question on screen with the option called $1: its number, then <CR>.
answer() {
  wait_for "$1"
  keys Escape ':Bravebot answer' Enter
  sleep 0.5
  local pick
  pick="$(tmux -S "$sock" capture-pane -p -t e2e | grep -o "[0-9]  $1" | head -1 | cut -c1)"
  keys "$pick"
  sleep 0.3
  keys Enter
  sleep 0.5
}

tmux -S "$sock" new-session -d -s e2e -x 150 -y 50 -c "$ws" "$nvim alpha.txt"
wait_for 'WORD-ALPHA'
keys ':Bravebot chat' Enter
wait_for 'prompt'
keys 'i' 'Who starts with what?' C-s
wait_for 'Start it'
capture first-start-question
answer 'Start it'
wait_for 'Start it'
capture second-start-question
keys Escape ':Bravebot status' Enter
sleep 0.5
capture status-while-waiting
keys q
answer 'Start it'
wait_for 'Trust this file'
capture delegate-asks
answer 'Trust this file for the session'
wait_for 'Keep it quarantined'
capture second-delegate-asks
answer 'Keep it quarantined'
wait_for 'Show it to the agent this once'
capture vet-question
answer 'Show it to the agent this once'
wait_for 'both reported'
keys Escape ':Bravebot chat' Enter
sleep 0.5
capture reports
echo "captures in $out:"
ls "$out"/d[0-9][0-9]-*.txt
