#!/usr/bin/env bash
# Records sessions that last as a person meets them, in a real terminal (tmux), against the real
# binary and the scripted fake model: a prompt, Neovim quit, Neovim started again and
# :Bravebot sessions resuming yesterday's conversation, the history on <C-p>, an incognito session,
# a loop at an interval and a self-paced one, and :checkhealth's state directory. Text captures go to target/e2e/neovim/sNN-name.txt, to be
# read; it asserts nothing. Usage: extension-neovim/tests/e2e-tmux-sessions.sh [NVIM]
set -euo pipefail
name=e2e-tmux-sessions.sh prefix=s
# shellcheck source=extension-neovim/tests/e2e-tmux-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/e2e-tmux-lib.sh"

ws="$tmp/project"
mkdir -p "$ws"
git -C "$ws" init -q
printf 'def add(a, b):\n    return a + b\n' > "$ws/calc.py"

cat > "$tmp/script.json" <<'EOF'
{"planner": [
  {"text": "Noted: we call the release **pelican**."},
  {"text": "We called it pelican."},
  {"text": "Nothing of this conversation is kept."},
  {"text": "The build log has not changed."},
  {"text": "Still no change in the build log."},
  {"tool": "schedule_next", "id": "call_next", "args": {"delay_seconds": 5, "noop": true, "reason": "the build is still running"}},
  {"text": "Nothing new; looking again soon."},
  {"text": "The build finished."}
]}
EOF
# A loop's ticks at a recording's pace rather than the default minute.
mkdir -p "$HOME/.bravebot"
chmod 700 "$HOME/.bravebot"
echo '{"loop": {"minSeconds": 1}}' > "$HOME/.bravebot/settings.json"
start_fake
install_plugin

# Yesterday: one prompt, then Neovim is quit.
tmux -S "$sock" new-session -d -s e2e -x 150 -y 45 -c "$ws" "$nvim calc.py; sleep 1000"
wait_for 'def add'
keys ':Bravebot chat' Enter
wait_for 'prompt:'
keys 'i' 'Remember: the release is called pelican' C-s
wait_for 'turn ended'
capture first-prompt
keys Escape ':qa!' Enter
sleep 1

# Today: a new Neovim, the session list, resume, a new prompt.
tmux -S "$sock" respawn-pane -k -t e2e -c "$ws" "$nvim calc.py"
wait_for 'def add'
keys ':Bravebot sessions' Enter
wait_for 'Resume which session'
capture session-picker
keys '1' Enter
wait_for 'resumed session'
capture resumed
keys 'i' 'What was the release called?' C-s
wait_for 'We called it pelican'
capture resumed-continues
keys Escape C-p
sleep 0.3
keys C-p
sleep 0.3
capture history-recalled
keys C-n C-n Escape

# An incognito session, and what it left behind.
find "$HOME/.bravebot" | sort > "$tmp/before.txt"
keys ':Bravebot incognito' Enter
wait_for 'incognito session'
capture incognito
keys 'i' 'A secret about this repository' C-s
wait_for 'Nothing of this conversation'
capture incognito-answered
find "$HOME/.bravebot" | sort > "$tmp/after.txt"
{ echo "files under ~/.bravebot added by the incognito prompt (none expected):"; diff "$tmp/before.txt" "$tmp/after.txt" || true; } \
  > "$out/s$(printf '%02d' $((n + 1)))-incognito-left-behind.txt"
n=$((n + 1))
# A loop at an interval, stopped after two ticks; then a self-paced one.
keys Escape ':Bravebot new' Enter
keys ':Bravebot loop 1s is the build log any different?' Enter
wait_for 'loop tick 2'
wait_for 'Still no change'
keys ':Bravebot loop stop' Enter
wait_for 'loop stopped'
capture loop-stopped
keys ':Bravebot loop has the build finished?' Enter
wait_for 'The build finished'
capture loop-self-paced
keys ':Bravebot loop stop' Enter
sleep 0.5
capture loop-self-paced-stop
keys ':checkhealth bravebot' Enter
wait_for 'prompt history'
capture checkhealth
echo "captures in $out:"
ls "$out"/s[0-9][0-9]-*.txt
