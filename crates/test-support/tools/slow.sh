#!/bin/sh
# Test tool: starts a grandchild (its pid goes to $PIDFILE if set), then sleeps; only a kill of
# the whole process group stops both.
sleep 30 &
if [ -n "$PIDFILE" ]; then
    echo "$!" > "$PIDFILE.tmp" && mv "$PIDFILE.tmp" "$PIDFILE"
fi
echo started
sleep 30
echo finished
