#!/bin/sh
# Prints lines as fast as it can, forever.
i=0
while true; do i=$((i+1)); echo "line $i"; done
