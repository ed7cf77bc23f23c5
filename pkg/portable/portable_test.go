package portable

import "testing"

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want Switches
	}{
		{nil, Switches{}},
		{map[string]string{Env: "1"}, Switches{All: true, ShimRelay: true, Keeper: true, NoParentEnv: true}},
		{map[string]string{Env: "0"}, Switches{}},
		{map[string]string{Env: "yes"}, Switches{}},
		{map[string]string{KeeperEnv: "1"}, Switches{Keeper: true}},
		{map[string]string{KeeperEnv: "0"}, Switches{}},
		{map[string]string{ShimRelayEnv: "1"}, Switches{ShimRelay: true}},
		{map[string]string{ShimRelayEnv: "yes"}, Switches{ShimRelay: true}},
		{map[string]string{ShimRelayEnv: ""}, Switches{}},
	} {
		if got := Read(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.env, got, tc.want)
		}
	}
}

func TestPassed(t *testing.T) {
	for name, want := range map[string]bool{Env: true, KeeperEnv: true, ShimRelayEnv: false, "HEARTH_HOME": false} {
		if Passed(name) != want {
			t.Errorf("Passed(%s) = %v, want %v", name, !want, want)
		}
	}
}
