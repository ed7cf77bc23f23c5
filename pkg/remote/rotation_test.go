package remote

import (
	"bufio"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/oauth"
	"github.com/hearth-mcp/hearth/pkg/oauth/oauthtest"
	"github.com/hearth-mcp/hearth/pkg/secret"
)

// Five clients call one remote server at once through one token family
// while its authorization server forces twenty refreshes; it rotates the
// refresh token on every use and revokes the family if a used one comes
// back. Not one call fails, nothing is signed into after the first
// sign-in, and no refresh token is presented twice.
func TestFiveCallersTwentyForcedRefreshes(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{})
	defer s.Close()
	vault, err := secret.Open(secret.Options{Dir: t.TempDir(), Backend: secret.File})
	if err != nil {
		t.Fatal(err)
	}
	m, err := oauth.New(oauth.Config{Name: "rotating", Server: s.URL(), Store: vault, Open: oauthtest.Browser,
		AutoSignIn: true, SignInTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const callers, refreshes = 5, 20
	var calls, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var failures sync.Map
	for i := 0; i < callers; i++ {
		c, err := Dial(Options{URL: s.URL(), Name: "rotating", Auth: m})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		answers := make(chan []byte, 1)
		go func() {
			sc := bufio.NewScanner(c.Stdout())
			for sc.Scan() {
				answers <- append([]byte(nil), sc.Bytes()...)
			}
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := 1; ; id++ {
				select {
				case <-stop:
					return
				default:
				}
				c.Write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`, id)), "")
				select {
				case a := <-answers:
					var r struct {
						ID    int             `json:"id"`
						Error json.RawMessage `json:"error"`
					}
					json.Unmarshal(a, &r)
					calls.Add(1)
					if r.Error != nil || r.ID != id {
						failed.Add(1)
						failures.Store(string(a), true)
					}
				case <-time.After(20 * time.Second):
					failed.Add(1)
					failures.Store("no answer within 20s", true)
					return
				}
			}
		}()
	}
	// Wait for the first sign-in and some calls, then force the refreshes
	// one after another, each once the last was taken up.
	deadline := time.Now().Add(30 * time.Second)
	for calls.Load() < callers*2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for i := 0; i < refreshes; i++ {
		before := s.Counts().Refreshes
		s.ExpireAccess()
		for s.Counts().Refreshes == before && time.Now().Before(deadline.Add(time.Minute)) {
			time.Sleep(time.Millisecond)
		}
		at := calls.Load()
		for calls.Load() < at+callers && time.Now().Before(deadline.Add(time.Minute)) {
			time.Sleep(time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	c := s.Counts()
	failures.Range(func(k, _ any) bool { t.Errorf("failed call: %s", k); return true })
	t.Logf("%d calls, %d failed; sign-ins %d, refreshes %d, refresh tokens reused %d, families revoked %d, 401s %d",
		calls.Load(), failed.Load(), m.SignIns(), c.Refreshes, c.Reuses, c.Revoked, c.Unauthorized)
	if failed.Load() != 0 || m.SignIns() != 1 || c.Authorizations != 1 || c.Reuses != 0 || c.Revoked != 0 || c.Refreshes != refreshes {
		t.Fatalf("%d failed calls, %d sign-ins (%d authorization requests), %d refreshes (want %d), %d reuses, %d revoked",
			failed.Load(), m.SignIns(), c.Authorizations, c.Refreshes, refreshes, c.Reuses, c.Revoked)
	}
	if calls.Load() < callers*refreshes {
		t.Fatalf("only %d calls", calls.Load())
	}
}
