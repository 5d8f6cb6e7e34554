# What the tmux recordings share, sourced by e2e-tmux*.sh after they set `name` (the script's
# file name, for messages) and `prefix` (what its capture files begin with: "", "s", "d").
# It checks the tools, makes a scratch home for Neovim and the server, and gives the recording
# start_fake (after the recording writes $tmp/script.json), install_plugin, capture, wait_for, keys and answer. `$1` of the script is NVIM.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
nvim="${1:-$root/.venv/bin/nvim}"
out="$root/target/e2e/neovim"
bravebot="$root/target/debug/bravebot"
fake="$root/target/debug/fake_model_server"
for f in "$nvim" "$bravebot" "$fake"; do
  [ -x "$f" ] || { echo "$name: $f not found (cargo build; .venv for nvim)" >&2; exit 1; }
done
command -v tmux >/dev/null || { echo "$name: tmux not found" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out/$prefix"[0-9][0-9]-*.txt
tmp="$(mktemp -d)"
sock="$tmp/tmux.sock"
# Every process under `$1`, deepest first.
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    descendants "$child"
    echo "$child"
  done
}
# Neovim's `--embed` child outlives the pane's SIGHUP and keeps `bravebot lsp` running, so the
# panes' process trees are killed outright before the server goes.
cleanup() {
  local pane pids
  for pane in $(tmux -S "$sock" list-panes -a -F '#{pane_pid}' 2>/dev/null); do
    pids="$(descendants "$pane") $pane"
    kill -KILL $pids 2>/dev/null || true
  done
  tmux -S "$sock" kill-server 2>/dev/null || true
  [ -n "${fake_pid:-}" ] && kill "$fake_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" \
  XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
mkdir -p "$HOME" "$XDG_CONFIG_HOME/nvim" "$XDG_STATE_HOME" "$XDG_CACHE_HOME"
unset BRAVEBOT_MODEL_URL BRAVEBOT_MODEL BRAVEBOT_MODEL_API BRAVEBOT_API_KEY

# Starts the fake model on the script in $tmp/script.json and sets `url`. It serves until its
# stdin closes, so a writer is kept open on a fifo (fd 3) for the whole recording.
start_fake() {
  mkfifo "$tmp/fake.in"
  "$fake" "$tmp/script.json" "$tmp/requests.json" < "$tmp/fake.in" > "$tmp/fake.out" &
  fake_pid=$!
  exec 3> "$tmp/fake.in"
  for _ in $(seq 1 100); do grep -q http "$tmp/fake.out" 2>/dev/null && break; sleep 0.1; done
  url="$(grep -o 'http[^ ]*' "$tmp/fake.out" | head -1)"
}

# The README's setup: the plugin linked as a start package (as scripts/install.sh links it),
# setup() with the binary and the fake model.
install_plugin() {
  mkdir -p "$XDG_DATA_HOME/nvim/site/pack/bravebot/start"
  ln -s "$root/extension-neovim" "$XDG_DATA_HOME/nvim/site/pack/bravebot/start/bravebot"
  cat > "$XDG_CONFIG_HOME/nvim/init.lua" <<EOF
require('bravebot').setup({
  cmd = { '$bravebot', 'lsp' },
  model = { api = 'openai', baseUrl = '$url', name = 'fake-model' },
})
EOF
}

n=0
# Saves the screen as the next numbered capture, named $1.
capture() {
  n=$((n + 1))
  tmux -S "$sock" capture-pane -p -t e2e > "$out/$prefix$(printf '%02d' "$n")-$1.txt"
}
# Waits (bounded) until the screen shows `text`; a recording, not a test: it goes on either way.
wait_for() {
  for _ in $(seq 1 150); do
    tmux -S "$sock" capture-pane -p -t e2e | grep -qF -- "$1" && return 0
    sleep 0.2
  done
  echo "$name: the screen never showed: $1" >&2
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
