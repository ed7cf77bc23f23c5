#!/bin/sh
# Run the Windows tests that Wine 8 can run (docs/development.md), through
# results.go, which sets apart Wine's TempDir-cleanup failures. Wine is not
# Windows: a pass here is a pass on Wine's Win32.
# Skips (exit 0) when wine64 or mingw-w64 is absent, unless CI=true.
set -eu
cd "$(dirname "$0")/../.."
if ! command -v wine64 >/dev/null 2>&1 && [ ! -x /usr/lib/wine/wine64 ] || ! command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
	if [ "${CI:-}" = true ]; then
		echo "wine: wine64 or x86_64-w64-mingw32-gcc missing under CI=true" >&2
		exit 1
	fi
	echo "wine: wine64 or x86_64-w64-mingw32-gcc not installed; skipped"
	exit 0
fi
eval "$(tools/wine/setup.sh)"
GOOS=windows go test -count=1 -json -timeout 300s -exec wine64 \
	-short ./pkg/localsock/ ./pkg/endpoint/ ./pkg/owner/ ./pkg/supervisor/ ./pkg/proctable/ ./pkg/sweep/ ./shim/ "$@" |
	go run tools/wine/results.go
