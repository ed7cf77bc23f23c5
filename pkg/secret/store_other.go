//go:build !linux && !darwin && !windows

package secret

const storeName = "the Secret Service over D-Bus"
