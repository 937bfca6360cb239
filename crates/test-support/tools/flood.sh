#!/bin/sh
# Test tool: writes exactly 1 MiB to stdout.
yes 0123456789abcdef | head -c 1048576
