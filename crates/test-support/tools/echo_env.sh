#!/bin/sh
# Test tool: shows what it was given.
echo "name=$KIMI_TOOL_NAME"
echo "id=$KIMI_TOOL_CALL_ID"
echo "extra=$EXTRA"
echo "pwd=$(pwd)"
echo "argc=$#"
printf 'stdin='
cat
