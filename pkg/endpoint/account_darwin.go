package endpoint

import (
	"os"
	"os/user"
	"strconv"
)

func init() { directoryAccount = directoryServicesAccount }

// directoryServicesAccount reads this uid's account from Directory
// Services through os/user (getpwuid_r in libSystem, no cgo needed), as
// passwd's seven fields. os/user does not give the shell: Account then has
// none, and the environment's SHELL stands.
func directoryServicesAccount() []string {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil || u.HomeDir == "" {
		return nil
	}
	return []string{u.Username, "*", u.Uid, u.Gid, u.Name, u.HomeDir, ""}
}
