#!/bin/sh
# Prepare a Wine prefix in which Go's windows/amd64 test binaries start.
#
# Go 1.24 and later need bcryptprimitives.dll (ProcessPrng), which Wine 8
# lacks; this builds a stand-in (bcryptprimitives.c) with mingw-w64 and puts it
# in the prefix's system32. Wine is not Windows: what passes here has run on
# Wine's implementation of the Win32 API, not on Windows (docs/development.md).
#
# Usage: eval "$(tools/wine/setup.sh)"   then   GOOS=windows go test -exec wine64 ./pkg/...
# WINEPREFIX defaults to /tmp/hearth-wine; nothing outside it is written.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
prefix=${WINEPREFIX:-/tmp/hearth-wine}
cc=${MINGW_CC:-x86_64-w64-mingw32-gcc}

wine=$(command -v wine64 || true)
[ -n "$wine" ] || [ ! -x /usr/lib/wine/wine64 ] || wine=/usr/lib/wine/wine64
if [ -z "$wine" ]; then
	echo "setup.sh: wine64 not found (apt-get install wine64)" >&2
	exit 2
fi
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "setup.sh: $cc not found (apt-get install gcc-mingw-w64-x86-64)" >&2
	exit 2
fi

export WINEPREFIX="$prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$prefix/system.reg" ]; then
	mkdir -p "$prefix"
	"$wine" wineboot --init >/dev/null 2>&1
	"$(dirname "$wine")/wineserver" -w 2>/dev/null || wineserver -w 2>/dev/null || true
fi
sys32="$prefix/drive_c/windows/system32"
if [ ! -f "$sys32/bcryptprimitives.dll" ] || [ "$here/bcryptprimitives.c" -nt "$sys32/bcryptprimitives.dll" ]; then
	"$cc" -O2 -shared -s -o "$sys32/bcryptprimitives.dll" "$here/bcryptprimitives.c" -ladvapi32
fi

echo "export WINEPREFIX='$prefix' WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml='"
echo "export PATH='$(dirname "$wine")':\"\$PATH\""
