package remote

import (
	"io"
	"strings"
	"testing"
	"time"
)

func readAll(t *testing.T, in string, limit int) ([]event, []error) {
	t.Helper()
	r := newSSEReader(strings.NewReader(in), limit)
	var evs []event
	var errs []error
	for {
		ev, err := r.next()
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return evs, errs
		}
		if err != nil {
			errs = append(errs, err)
			if err != errEventTooLarge {
				return evs, errs
			}
			continue
		}
		evs = append(evs, ev)
	}
}

func TestSSE(t *testing.T) {
	evs, errs := readAll(t, "\xef\xbb\xbf: keep-alive\n\nid: 1\nevent: message\ndata: {\"a\":\ndata: 1}\n\nretry: 2500\n\n"+
		"data:x\r\n\r\nevent: endpoint\ndata: /messages?s=1\n\nid: 7\n\n", 1<<10)
	if len(errs) != 0 || len(evs) != 5 {
		t.Fatalf("%d events %+v, errors %v", len(evs), evs, errs)
	}
	if evs[0].ID != "1" || string(evs[0].Data) != "{\"a\":\n1}" || evs[0].Name != "message" {
		t.Fatalf("first %+v", evs[0])
	}
	if evs[1].Retry != 2500*time.Millisecond || evs[1].Data != nil {
		t.Fatalf("retry %+v", evs[1])
	}
	if string(evs[2].Data) != "x" || evs[3].Name != "endpoint" || !evs[4].hasID || evs[4].ID != "7" {
		t.Fatalf("%+v", evs[2:])
	}
}

// An event over the limit is skipped whole, reported, and the stream goes
// on; so is a line over it.
func TestSSEBounded(t *testing.T) {
	big := strings.Repeat("x", 200)
	evs, errs := readAll(t, "data: "+big+"\n\ndata: small\n\ndata: a\ndata: "+big[:90]+"\n\ndata: ok\n\n", 64)
	if len(errs) != 2 || len(evs) != 2 || string(evs[0].Data) != "small" || string(evs[1].Data) != "ok" {
		t.Fatalf("events %+v errors %v", evs, errs)
	}
}

func FuzzSSE(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "id: 1\r\ndata: b\r\n\r\n", ":\n\n", "retry: x\n\n", "data"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := newSSEReader(strings.NewReader(s), 32)
		for i := 0; i < 1000; i++ {
			ev, err := r.next()
			if err != nil && err != errEventTooLarge {
				return
			}
			if len(ev.Data) > 32 {
				t.Fatalf("an event of %d bytes past a 32-byte limit", len(ev.Data))
			}
		}
	})
}
