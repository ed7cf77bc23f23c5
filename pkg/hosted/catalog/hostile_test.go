//go:build linux

package catalog

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// entryText is a valid entry of key, listing a tool named tool.
func entryText(key, tool string) []byte {
	b, _ := json.Marshal(&Entry{Version: Version, Key: key, Server: "s", InitParams: json.RawMessage(`{}`),
		InitResult: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s"}}`),
		Lists:      map[string][]json.RawMessage{"tools/list": {json.RawMessage(`{"tools":[{"name":"` + tool + `"}]}`)}}})
	return b
}

// The bad-input table of hearth's own files, for catalog entries: an entry
// that is a FIFO, a socket, a device, a link (to /dev/zero, a FIFO, a file
// elsewhere), another user's, writable by others, over MaxEntry or a
// directory is refused at once with the reason, listed by nobody, and the
// good entry beside them still loads.
func TestHostileEntriesAreNotAnsweredFrom(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, nil)
	keys := map[string]string{} // class -> key
	n := 0
	made := safefiletest.Hostile(t, dir, func(class string) string {
		n++
		key := strings.Repeat("a", 7) + string(rune('0'+n%10))
		if n >= 10 {
			key = "b" + key[1:]
		}
		keys[class] = key
		return key + ".json"
	}, func(name string) []byte { return entryText(strings.TrimSuffix(name, ".json"), "FORGED") }, MaxEntry)
	good := "0123abcd"
	os.WriteFile(filepath.Join(dir, good+".json"), entryText(good, "real"), 0o600)
	for _, class := range made {
		key := keys[class]
		safefiletest.Prompt(t, "Lookup of a "+class, func() {
			e, why := s.Lookup(key)
			if e != nil || why == nil {
				t.Errorf("an entry of class %q: %v, %v", class, e, why)
			}
		})
	}
	if e, ok := s.Load(good); !ok || e.Server != "s" {
		t.Fatalf("the good entry: %v %v", e, ok)
	}
	safefiletest.Prompt(t, "All", func() {
		if all := s.All(); len(all) != 1 || all[0].Key != good {
			t.Errorf("All listed %d entries", len(all))
		}
	})
}

// What is in a file is checked too: invalid UTF-8 is refused, and so is
// what the store's check refuses (the router's, in the daemon); an entry
// over MaxEntry is not written.
func TestEntriesAreChecked(t *testing.T) {
	dir := t.TempDir()
	refused := errors.New("not the shape of an initialize result")
	s := Open(dir, func(e *Entry) error {
		if len(e.InitResult) == 0 || e.InitResult[0] != '{' {
			return refused
		}
		return nil
	})
	os.WriteFile(filepath.Join(dir, "aaaa0001.json"), []byte("{\"version\":1,\"key\":\"aaaa0001\",\"server\":\"\xff\",\"initResult\":{}}"), 0o600)
	os.WriteFile(filepath.Join(dir, "aaaa0002.json"), []byte(`{"version":1,"key":"aaaa0002","initResult":null,"lists":{}}`), 0o600)
	os.WriteFile(filepath.Join(dir, "aaaa0003.json"), []byte(`{"version":1,"key":"aaaa0003","initResult":"null"}`), 0o600)
	if _, why := s.Lookup("aaaa0001"); why == nil || !strings.Contains(why.Error(), "UTF-8") {
		t.Fatalf("invalid UTF-8: %v", why)
	}
	// JSON null decodes as no initialize result at all; the JSON string
	// "null" is what the check sees.
	if _, why := s.Lookup("aaaa0002"); why == nil {
		t.Fatal("an entry with a null initResult was taken")
	}
	if _, why := s.Lookup("aaaa0003"); why == nil {
		t.Fatal("an entry the check refuses was taken")
	}
	huge := &Entry{Key: "aaaa0004", InitResult: json.RawMessage(`{}`), Lists: map[string][]json.RawMessage{
		"tools/list": {json.RawMessage(`{"tools":[{"name":"` + strings.Repeat("x", MaxEntry) + `"}]}`)}}}
	if err := s.Save(huge); err == nil {
		t.Fatal("an entry over MaxEntry was written")
	}
	if _, err := os.Stat(filepath.Join(dir, "aaaa0004.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file was left: %v", err)
	}
}

// No file is read under the store's lock: while one entry's read is held
// up, another entry loads, an entry is saved and touched, and status's
// cached entries answer.
func TestNoReadUnderTheLock(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir, nil)
	os.WriteFile(filepath.Join(dir, "aaaa0001.json"), entryText("aaaa0001", "slow"), 0o600)
	os.WriteFile(filepath.Join(dir, "aaaa0002.json"), entryText("aaaa0002", "quick"), 0o600)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	readFile = func(p string, limit int64) ([]byte, error) {
		if strings.Contains(p, "aaaa0001") {
			once.Do(func() { close(held) })
			<-release
		}
		return os.ReadFile(p)
	}
	defer func() { readFile = defaultRead }()
	slow := make(chan *Entry)
	go func() { e, _ := s.Lookup("aaaa0001"); slow <- e }()
	<-held
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, ok := s.Load("aaaa0002"); !ok {
			t.Error("the quick entry did not load")
		}
		if err := s.Save(&Entry{Key: "aaaa0003", InitResult: json.RawMessage(`{}`)}); err != nil {
			t.Error(err)
		}
		s.Touch("aaaa0003", time.Now())
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the store's lock was held across another entry's read")
	}
	close(release)
	if e := <-slow; e == nil {
		t.Fatal("the slow entry did not load")
	}
}
