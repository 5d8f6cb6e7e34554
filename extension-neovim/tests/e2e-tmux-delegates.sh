#!/usr/bin/env bash
# Records two checker delegates as a person meets them in a real terminal (tmux), against the real
# binary and the scripted fake model: the start questions, each delegate's own question naming
# who asks, the lines per delegate in the chat, `:Bravebot status` while one waits, and the
# reports. Text captures go to target/e2e/neovim/dNN-name.txt, to be read.
# Usage: extension-neovim/tests/e2e-tmux-delegates.sh [NVIM]
set -euo pipefail
name=e2e-tmux-delegates.sh prefix=d
# shellcheck source=extension-neovim/tests/e2e-tmux-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/e2e-tmux-lib.sh"

ws="$tmp/project"
mkdir -p "$ws/vendor"
printf 'WORD-ALPHA and more\n' > "$ws/alpha.txt"
printf 'WORD-BETA and more\n' > "$ws/vendor/beta.txt"

# The turn fans out two checkers; each delegate's replies are picked by a word in its task, and
# the check judges unsafe what holds WORD-. The first reads its file and is asked to be trusted;
# the second prints its file with a run and is shown the output once (no delegate holds
# vet_content).
cat > "$tmp/script.json" <<'EOF'
{"planner": [
  {"tool": "spawn_agent", "id": "fan", "args": {"kind": "checker", "task": "Read the file named below and say its first word.", "each": ["alpha.txt", "vendor/beta.txt"], "why": "read two files side by side"}},
  {"text": "waiting for the readers"},
  {"text": "both reported"}
],
"delegateWhen": [
  {"needle": "alpha.txt", "replies": [
    {"tool": "read_file", "id": "call_a", "args": {"path": "alpha.txt", "why": "read alpha"}},
    {"text": "alpha.txt begins with WORD-ALPHA"}]},
  {"needle": "vendor/beta.txt", "replies": [
    {"tool": "run", "id": "call_b", "args": {"command": "sh -c 'cat vendor/beta.txt'", "why": "print beta"}},
    {"tool": "read_output", "id": "call_v", "args": {"ref": "ref:0", "why": "see beta"}},
    {"text": "vendor/beta.txt begins with WORD-BETA"}]}
],
"competentCheck": "WORD-"}
EOF
start_fake
install_plugin

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
wait_for 'Run it once'
capture second-delegate-asks
answer 'Run it once'
wait_for 'Show it to the agent this once'
capture output-question
answer 'Show it to the agent this once'
wait_for 'both reported'
keys Escape ':Bravebot chat' Enter
sleep 0.5
capture reports
echo "captures in $out:"
ls "$out"/d[0-9][0-9]-*.txt
