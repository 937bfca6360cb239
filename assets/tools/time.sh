#!/bin/sh
# Demo tool for kimi-tui: the current time.
# Input on stdin: {} or {"timezone": "Asia/Shanghai"} (an IANA name; unknown names give UTC).
input=$(cat)
tz=$(printf '%s' "$input" | tr -d '\n' |
    sed -n -E 's|.*"timezone"[[:space:]]*:[[:space:]]*"([A-Za-z0-9_+/-]*)".*|\1|p')
printf 'utc: %s\n' "$(date -u '+%Y-%m-%dT%H:%M:%SZ')"
printf 'local: %s\n' "$(date '+%Y-%m-%d %H:%M:%S %Z')"
if [ -n "$tz" ]; then
    printf '%s: %s\n' "$tz" "$(TZ="$tz" date '+%Y-%m-%d %H:%M:%S %Z')"
fi
