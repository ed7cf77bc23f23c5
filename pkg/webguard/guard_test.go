package webguard

import "testing"

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:8080": true, "127.0.0.1": true, "127.0.0.1:1": true, "127.1.2.3:80": true,
		"[::1]": true, "[::1]:8080": true, "::1": true,
		"": false, "example.com": false, "localhost.example.com": false, "10.0.0.1:80": false, "0.0.0.0:80": false,
		"[::]:80": false, "localhost:x": false, "[fe80::1%lo]:80": false, "127.0.0.1.nip.io": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// A browser's Origin: a loopback origin passes, another site's, a path, a
// scheme that is not http(s) or garbage are refused; no Origin passes
// (clients that are not browsers send none).
func TestCheckOrigin(t *testing.T) {
	for _, tc := range []struct {
		origins []string
		ok      bool
	}{
		{nil, true},
		{[]string{"http://127.0.0.1:8765"}, true},
		{[]string{"http://localhost"}, true},
		{[]string{"https://evil.example"}, false},
		{[]string{"http://127.0.0.1:8765/page"}, false},
		{[]string{"null"}, false},
		{[]string{"file://"}, false},
		{[]string{"http://127.0.0.1:1", "http://evil.example"}, false},
	} {
		if got := CheckOrigin(tc.origins) == ""; got != tc.ok {
			t.Errorf("%q: ok %v, want %v", tc.origins, got, tc.ok)
		}
	}
	if CheckHost("") == "" || CheckHost("evil.example:80") == "" || CheckHost("127.0.0.1:80") != "" {
		t.Fatal("CheckHost")
	}
}
