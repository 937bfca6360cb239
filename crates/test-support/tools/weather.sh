#!/bin/sh
# Test tool: reads {"city": "..."} on stdin, answers with fixed weather for that city.
input=$(cat)
city=$(printf '%s' "$input" | tr -d '\n' | sed -n 's/.*"city"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
printf '{"city": "%s", "weather": "Sunny", "temp_c": 25}\n' "$city"
