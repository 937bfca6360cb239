#!/bin/sh
# Test tool: exits at once but leaves a grandchild holding stdout (pid in $PIDFILE if set).
sleep 30 &
if [ -n "$PIDFILE" ]; then
    echo "$!" > "$PIDFILE.tmp" && mv "$PIDFILE.tmp" "$PIDFILE"
fi
echo done
