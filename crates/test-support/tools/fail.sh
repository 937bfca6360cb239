#!/bin/sh
# Test tool: some stdout, a lot of stderr, exit code 3.
echo "partial result"
i=0
while [ "$i" -lt 200 ]; do
    echo "noise line $i" >&2
    i=$((i + 1))
done
echo "error: the weather service is unavailable" >&2
exit 3
