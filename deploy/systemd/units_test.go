package systemd

import "testing"

// Program reads back the ExecStart Render wrote, through systemd's
// prefixes; a unit without one is an error.
func TestProgram(t *testing.T) {
	units, err := Render("/home/me/go/bin/hearthd")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range units {
		if u.Name != "hearthd.service" {
			continue
		}
		if got, err := Program(u.Content); err != nil || got != "/home/me/go/bin/hearthd" {
			t.Fatalf("Program(Render) = %q, %v", got, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"[Service]\nExecStart=-/usr/bin/hearthd serve\n", "/usr/bin/hearthd"},
		{"[Service]\n  ExecStart = @/opt/hearthd hearthd serve\n", "/opt/hearthd"},
		{"[Service]\n# ExecStart=/commented/out\n", ""},
		{"[Service]\nExecStart=\n", ""},
		{"", ""},
	} {
		got, err := Program(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("%q: accepted as %q", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
