//go:build unix && !linux

package rank

import "syscall"

const mapFlags = syscall.MAP_PRIVATE
