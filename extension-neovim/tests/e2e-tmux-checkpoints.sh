#!/usr/bin/env bash
# Records, in a real terminal (tmux) against the real binary and the scripted fake model, what a
# person sees of checkpoints: the chat's line naming a turn's checkpoint, :Bravebot checkpoints
# (the list, what a checkpoint offers, a file's diff then and now), a restore over the person's
# own typing (the question with the three versions, kept), a restore after naming the files that
# go back, `u` in the restored buffer, and :Bravebot undo-restore. Captures go to
# target/e2e/neovim/cNN-*.txt. Usage: extension-neovim/tests/e2e-tmux-checkpoints.sh [NVIM]
set -euo pipefail
name=e2e-tmux-checkpoints.sh prefix=c
# shellcheck source=extension-neovim/tests/e2e-tmux-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/e2e-tmux-lib.sh"

ws="$tmp/project"
mkdir -p "$ws"
printf 'one\ntwo\n' > "$ws/a.txt"
printf 'written by hand\n' > "$ws/mine.txt"

cat > "$tmp/script.json" <<'EOF'
{"planner": [
  {"tool": "edit_file", "id": "call_edit", "args": {"path": "a.txt", "old_text": "two", "new_text": "TWO", "why": "shout the second line"}},
  {"tool": "write_file", "id": "call_new", "args": {"path": "new.txt", "contents": "fresh\n", "why": "add a note"}},
  {"text": "Shouted, and added new.txt."}
]}
EOF
start_fake
install_plugin

tmux -S "$sock" new-session -d -s e2e -x 160 -y 50 -c "$ws" "$nvim a.txt"
wait_for 'two'
keys ':Bravebot chat' Enter
wait_for 'prompt'
keys Escape ':Bravebot trust a.txt' Enter
sleep 0.5
keys ':Bravebot chat' Enter
keys 'i' 'Shout the second line of a.txt and add new.txt' C-s
wait_for 'edit a file'
keys Escape ':Bravebot answer' Enter
sleep 0.5
keys '\' 'A'
wait_for 'write a file'
keys Escape ':Bravebot answer' Enter
sleep 0.5
keys '\' 'A'
wait_for 'turn ended'
sleep 0.5
capture turn-checkpoint-line
# The list, what a checkpoint offers, and a file's diff between the checkpoint and now.
keys Escape ':Bravebot checkpoints' Enter
sleep 1
capture checkpoints-list
keys '1' Enter
sleep 1
capture checkpoint-offers
keys '1' Enter
sleep 1
capture diff-then-and-now
keys 'q'
sleep 0.5
# The person types into a.txt, unsaved; a restore asks before replacing that, and <CR> keeps it.
keys ':wincmd t' Enter
sleep 0.3
keys 'G' 'o' 'my own line' Escape
id="$(tmux -S "$sock" capture-pane -p -J -t e2e -S -200 | grep -o 'checkpoint [^ ,]*, before this turn' | head -1 | cut -d' ' -f2 | tr -d ,)"
keys ":Bravebot restore $id" Enter
wait_for 'restore over your changes'
sleep 0.5
capture restore-question
keys Escape ':Bravebot answer' Enter
sleep 0.5
capture restore-question-focused
keys Enter
wait_for 'skipped'
sleep 0.5
capture restore-kept-your-changes
# Without the person's line, the restore to before the turn from the picker: the files are
# named first.
keys ':wincmd t' Enter
sleep 0.3
keys 'u'
sleep 0.3
keys ':Bravebot checkpoints' Enter
sleep 1
turn="$(tmux -S "$sock" capture-pane -p -t e2e | grep -o '^[0-9]*: .*the turn changed' | head -1 | cut -d: -f1)"
keys "$turn" Enter
sleep 1
restore="$(tmux -S "$sock" capture-pane -p -t e2e | grep -o '[0-9]*: Restore to this checkpoint' | head -1 | cut -d: -f1)"
keys "$restore" Enter
sleep 1
capture restore-names-the-files
keys '1' Enter
wait_for 'undo-restore undoes it'
sleep 0.5
capture restored
# `u` in the restored buffer takes the restore back there; <C-r> redoes it.
keys ':wincmd t' Enter
sleep 0.3
keys 'u'
sleep 0.5
capture u-in-the-buffer
keys C-r
sleep 0.5
# Undo the restore: the turn's result comes back.
keys ':Bravebot undo-restore' Enter
wait_for 'the last restore is undone'
sleep 0.5
capture undo-restore
keys ':Bravebot checkpoints' Enter
sleep 1
capture checkpoints-after-undo
keys Escape
echo "captures in $out:"
ls "$out"/c[0-9][0-9]-*.txt
