#!/bin/sh
# Ignores SIGTERM (and so do its children, which inherit the ignored signal).
trap '' TERM
sleep 300 &
echo started
while true; do sleep 1; done
