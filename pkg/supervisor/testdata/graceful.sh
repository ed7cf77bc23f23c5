#!/bin/sh
# Exits cleanly on SIGTERM.
trap 'echo bye; exit 0' TERM
echo started
sleep 300 &
wait
