#!/bin/sh
# Demo tool for kimi-tui: list a directory.
# Input on stdin: {"path": "some/dir"} (default "."). The path is data: it is passed to ls as one
# argument after `--`, never evaluated by the shell.
input=$(cat)
path=$(printf '%s' "$input" | tr -d '\n' |
    sed -n -E 's/.*"path"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)".*/\1/p')
# Undo the JSON escapes that can appear in a path: \" \/ \\ (in that order, \\ last).
path=$(printf '%s' "$path" | sed -e 's/\\"/"/g' -e 's/\\\//\//g' -e 's/\\\\/\\/g')
if [ -z "$path" ]; then
    path=.
fi
exec ls -la -- "$path"
