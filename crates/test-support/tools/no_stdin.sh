#!/bin/sh
# Test tool: never reads stdin.
echo ok
