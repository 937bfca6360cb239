#!/usr/bin/env bash
# How often an idle kimi-tui wakes up, thread by thread.
#
#   benches/e2e/idle.sh BINARY [SECONDS] [KEYS...]
#     SECONDS  how long to sample (default 10)
#     KEYS     tmux send-keys arguments sent before sampling (e.g. C-t to open the inspector,
#              or `hello Enter` to send a message and sample once its answer is over)
#   IDLE_SETTLE=N  seconds waited before sampling (default 3); IDLE_SHOW=1 prints the screen;
#   IDLE_FLAGS="--inline"  more arguments for the binary
#
# Runs `BINARY --demo` (the in-process mock server and the demo's stdio MCP server) in tmux at
# 120x40 on its own tmux server, with HOME and the XDG directories in a temporary directory it
# removes. Once the prompt is on screen (and the KEYS sent), it waits IDLE_SETTLE s, then reads every
# thread's voluntary + nonvoluntary context switches from /proc/PID/task/*/status at the start
# and the end of SECONDS, and prints one line a thread and the total:
#   <tid> <comm> wakeups_per_s=<...>
#   total wakeups_per_s=<...>
# A context switch is counted as a wake-up: a thread that sleeps until it is woken switches out
# once a wake. Threads born during the sample count from zero; threads that died are listed
# as gone.
set -euo pipefail

bin=$(realpath "$1"); secs=${2:-10}; shift $(( $# >= 2 ? 2 : 1 ))
tmp=$(mktemp -d)
sock="kimi-idle-$$"
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/home"
tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
  "exec env HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_STATE_HOME=$tmp/home/.state \
   XDG_DATA_HOME=$tmp/home/.data XDG_CACHE_HOME=$tmp/home/.cache TERM=xterm-256color \
   $bin --demo ${IDLE_FLAGS:-}"
pid=$(tmux -L "$sock" display -p '#{pane_pid}')

screen() { tmux -L "$sock" capture-pane -p 2>/dev/null || true; }
end=$((SECONDS + 30))
until screen | grep -q "Type a message"; do
  if [ $SECONDS -ge $end ]; then echo "timed out waiting for the prompt" >&2; screen >&2; exit 1; fi
  sleep 0.2
done
[ $# -gt 0 ] && tmux -L "$sock" send-keys "$@"
sleep "${IDLE_SETTLE:-3}"

# tid comm switches, one line a thread.
sample() {
  for t in /proc/"$pid"/task/*; do
    local tid=${t##*/} comm sw
    comm=$(cat "$t/comm" 2>/dev/null) || continue
    sw=$(awk '/ctxt_switches/ {s += $2} END {print s}' "$t/status" 2>/dev/null) || continue
    printf '%s %s %s\n' "$tid" "${comm// /_}" "$sw"
  done
}
sample > "$tmp/a"
sleep "$secs"
sample > "$tmp/b"
[ -n "${IDLE_SHOW:-}" ] && screen >&2

awk -v secs="$secs" '
  NR == FNR { before[$1] = $3; next }
  {
    rate = ($3 - ($1 in before ? before[$1] : 0)) / secs
    printf "%s %s wakeups_per_s=%.1f\n", $1, $2, rate
    total += rate; seen[$1] = 1
  }
  END {
    for (t in before) if (!(t in seen)) printf "%s gone\n", t
    printf "total wakeups_per_s=%.1f\n", total
  }' "$tmp/a" "$tmp/b"
