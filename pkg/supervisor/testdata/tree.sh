#!/bin/sh
# A child that starts a grandchild, says so, and waits forever.
sleep 300 &
echo "grandchild $!"
echo started
sleep 300
