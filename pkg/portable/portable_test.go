package portable

import "testing"

func TestSelected(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{{"1", true}, {"", false}, {"0", false}, {"yes", false}} {
		getenv := func(name string) string {
			if name == Env {
				return tc.value
			}
			return ""
		}
		if got := Selected(getenv); got != tc.want {
			t.Errorf("%s=%q: Selected %v, want %v", Env, tc.value, got, tc.want)
		}
	}
}
