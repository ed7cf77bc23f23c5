//go:build !unix && !windows

package opener

import "os/exec"

func detach(*exec.Cmd) {}
