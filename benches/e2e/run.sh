#!/usr/bin/env bash
# End-to-end cost of streaming one long answer through the real TUI.
#
#   benches/e2e/run.sh BINARY MODE KIND TOKENS [SCREEN]
#     MODE   raw | chat
#     KIND   code (one fenced block) | prose (paragraphs of 200 tokens) | paragraph (one, no newline)
#     SCREEN fullscreen (the default) | inline
#
# Starts benches/e2e/flood.py on a free port, runs BINARY in tmux at 120x40 (its own tmux server,
# no tmux config) with a config pointing at it, sends a prompt, waits until the answer's last
# line (END-OF-FLOOD) is on screen and the turn has ended, then prints one line:
#   MODE KIND TOKENS SCREEN cpu_s=<utime+stime of the kimi-tui process> rss_mb=<VmHWM>
#   wall_s=<...> tty_kb=<bytes the program wrote to the terminal, as tmux's pipe-pane saw them>
# Everything it writes (config, sessions, logs) goes to a temporary directory it removes.
set -euo pipefail

bin=$(realpath "$1"); mode=$2; kind=$3; tokens=$4; screen_kind=${5:-fullscreen}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
sock="kimi-e2e-$$"
flood_pid=""
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  [ -n "$flood_pid" ] && kill "$flood_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

python3 "$here/flood.py" --port 0 --tokens "$tokens" --kind "$kind" --port-file "$tmp/port" 2>/dev/null &
flood_pid=$!
for _ in $(seq 100); do [ -f "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")

mkdir -p "$tmp/home"
cat > "$tmp/config.toml" <<CFG
default_profile = "flood"
[profiles.flood]
mode = "$mode"
base_url = "http://127.0.0.1:$port/v1"
model = "flood"
CFG

tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
  "exec env HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/home/.state \
   XDG_DATA_HOME=$tmp/home/.data XDG_CACHE_HOME=$tmp/home/.cache TERM=xterm-256color \
   $bin --config $tmp/config.toml --$screen_kind"
pid=$(tmux -L "$sock" display -p '#{pane_pid}')
# Every byte the program writes to the terminal, from here on.
tmux -L "$sock" pipe-pane -o "cat > $tmp/tty"

screen() { tmux -L "$sock" capture-pane -p 2>/dev/null || true; }
wait_for() { # $1 = command that succeeds when ready; $2 = timeout in seconds
  local end=$((SECONDS + $2))
  until eval "$1"; do
    if [ $SECONDS -ge $end ]; then echo "timed out waiting for: $1" >&2; screen >&2; exit 1; fi
    sleep 0.2
  done
}
wait_for 'screen | grep -q "Type a message"' 30
start=$(date +%s.%N)
tmux -L "$sock" send-keys "flood" Enter
wait_for 'screen | grep -q "END-OF-FLOOD" && screen | grep -q "│ idle │"' 900
end=$(date +%s.%N)
[ -n "${E2E_SHOW:-}" ] && screen >&2

tck=$(getconf CLK_TCK)
# Fields after the ")" that closes the command name: utime and stime are the 12th and 13th.
read -r ut st < <(sed 's/.*) //' "/proc/$pid/stat" | awk '{print $12, $13}')
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
printf '%s %s %s %s cpu_s=%.2f rss_mb=%.1f wall_s=%.1f tty_kb=%d\n' "$mode" "$kind" "$tokens" \
  "$screen_kind" "$(echo "($ut + $st) / $tck" | bc -l)" "$(echo "$hwm / 1024" | bc -l)" \
  "$(echo "$end - $start" | bc -l)" "$(( $(stat -c %s "$tmp/tty") / 1024 ))"
