package frame

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r *Reader) (lines []string, tooLarge int) {
	t.Helper()
	for {
		line, err := r.Read()
		switch {
		case errors.Is(err, ErrTooLarge):
			lines = append(lines, "<too large>")
			tooLarge++
		case errors.Is(err, io.EOF):
			return lines, tooLarge
		case err != nil:
			t.Fatalf("Read: %v", err)
		default:
			lines = append(lines, string(line))
		}
	}
}

func TestReaderLimits(t *testing.T) {
	const limit = 16
	exact := strings.Repeat("x", limit)
	over := strings.Repeat("y", limit+1)
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"simple", "a\nb\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"blank lines skipped", "\n  \na\n\r\n", []string{"a"}},
		{"exactly the limit is accepted", exact + "\nz\n", []string{exact, "z"}},
		{"one over is rejected and the stream goes on", over + "\nz\n", []string{"<too large>", "z"}},
		{"over at EOF", over, []string{"<too large>"}},
		{"crlf kept for JSON to ignore", "a\r\n", []string{"a\r"}},
		{"huge line then more", strings.Repeat("q", 10*limit) + "\nok\n", []string{"<too large>", "ok"}},
		{"two oversized in a row", over + "\n" + over + "\nok", []string{"<too large>", "<too large>", "ok"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// One byte at a time exercises every chunk boundary.
			for _, src := range []io.Reader{strings.NewReader(c.in), iotest.OneByteReader(strings.NewReader(c.in))} {
				got, _ := readAll(t, NewReaderSize(src, limit))
				if strings.Join(got, "|") != strings.Join(c.want, "|") {
					t.Fatalf("got %q, want %q", got, c.want)
				}
			}
		})
	}
}

func TestReaderMiB(t *testing.T) {
	exact := bytes.Repeat([]byte("a"), MaxLine)
	over := bytes.Repeat([]byte("b"), MaxLine+1)
	in := bytes.Join([][]byte{exact, over, []byte("{}")}, []byte("\n"))
	got, tooLarge := readAll(t, NewReader(bytes.NewReader(in)))
	if len(got) != 3 || len(got[0]) != MaxLine || tooLarge != 1 || got[2] != "{}" {
		t.Fatalf("got %d lines (first %d bytes), %d too large", len(got), len(got[0]), tooLarge)
	}
}

func TestReaderPassesErrors(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("a\n"), iotest.ErrReader(boom)))
	if line, err := r.Read(); err != nil || string(line) != "a" {
		t.Fatalf("first: %q %v", line, err)
	}
	if _, err := r.Read(); !errors.Is(err, boom) {
		t.Fatalf("want boom, got %v", err)
	}
}

func TestWriterOneLinePerFrame(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	if err := w.WriteRaw([]byte("{\n  \"a\": \"x\\ny\"\r\n}")); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(map[string]any{"html": "<&>", "nl": "a\nb"}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRaw([]byte("{\n bad")); err == nil {
		t.Fatal("invalid JSON with a newline must be refused")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "{\"a\":\"x\\ny\"}\n{\"html\":\"<&>\",\"nl\":\"a\\nb\"}\n"
	if out.String() != want {
		t.Fatalf("got %q\nwant %q", out.String(), want)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriterStickyError(t *testing.T) {
	w := NewWriter(failWriter{})
	_ = w.Write("x")
	if err := w.Flush(); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("flush: %v", err)
	}
	if err := w.Write("y"); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("later write: %v", err)
	}
}

// FuzzReader checks that whatever the bytes, the reader never returns a line
// over its limit, never returns a line with a newline in it, and always ends.
func FuzzReader(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{}\n"), 8)
	f.Add([]byte("xxxxxxxxxxxxxxxxxxxxxxxx\nok"), 4)
	f.Add([]byte("\n\n\r\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if limit < 1 || limit > 1<<16 {
			t.Skip()
		}
		r := NewReaderSize(iotest.HalfReader(bytes.NewReader(data)), limit)
		total := 0
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatal("reader did not end")
			}
			line, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if errors.Is(err, ErrTooLarge) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(line) > limit || bytes.IndexByte(line, '\n') >= 0 || len(bytes.TrimSpace(line)) == 0 {
				t.Fatalf("bad line %q (limit %d)", line, limit)
			}
			total += len(line)
		}
		if total > len(data) {
			t.Fatal("returned more bytes than were read")
		}
	})
}

// A reader on a budget keeps lines up to FreeLine for free; a longer one
// draws on the budget, and is dropped (ErrOverloaded) when the budget is
// spent, unless the reader is exempt. The next line is read normally, and
// nothing stays taken once the reader moves on or closes.
func TestReaderBudget(t *testing.T) {
	long := strings.Repeat("x", 3*FreeLine)
	input := "short\n" + long + "\n" + "after\n" + long + "\n"
	b := NewBudget(int64(FreeLine)) // room for less than the long line's excess
	r := NewReader(strings.NewReader(input))
	exempt := false
	r.UseBudget(b, func() bool { return exempt })
	if line, err := r.Read(); err != nil || string(line) != "short" {
		t.Fatalf("short: %q %v", line, err)
	}
	if _, err := r.Read(); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("long line over budget: %v", err)
	}
	if b.Used() != 0 {
		t.Fatalf("a dropped line still holds %d", b.Used())
	}
	if line, err := r.Read(); err != nil || string(line) != "after" {
		t.Fatalf("after: %q %v", line, err)
	}
	exempt = true // an idle connection may finish its line anyway
	if line, err := r.Read(); err != nil || len(line) != len(long) {
		t.Fatalf("exempt long line: %d %v", len(line), err)
	}
	if b.Used() == 0 {
		t.Fatal("the long line took nothing from the budget")
	}
	r.Close()
	if b.Used() != 0 {
		t.Fatalf("closed reader still holds %d", b.Used())
	}
}

func TestBudgetTake(t *testing.T) {
	b := NewBudget(10)
	if !b.Take(6, false) || b.Take(6, false) || !b.Take(4, false) || b.Used() != 10 {
		t.Fatalf("used %d", b.Used())
	}
	if !b.Take(5, true) || b.Used() != 15 {
		t.Fatal("forced take")
	}
	b.Give(15)
	if b.Used() != 0 {
		t.Fatal("give")
	}
}

// A share holds at most its own bound, and what it takes counts against
// the budget it is carved from: it fits only where both have room.
func TestBudgetShare(t *testing.T) {
	b := NewBudget(10)
	s := b.Share(4)
	if !s.Take(3, false) || s.Take(2, false) || b.Used() != 3 || s.Used() != 3 {
		t.Fatalf("share over its bound: share %d, budget %d", s.Used(), b.Used())
	}
	if !b.Take(7, false) || s.Take(1, false) || s.Used() != 3 || b.Used() != 10 {
		t.Fatalf("share over the budget: share %d, budget %d", s.Used(), b.Used())
	}
	if !s.Take(2, true) || s.Used() != 5 || b.Used() != 12 {
		t.Fatalf("forced: share %d, budget %d", s.Used(), b.Used())
	}
	s.Give(5)
	b.Give(7)
	if s.Used() != 0 || b.Used() != 0 {
		t.Fatalf("given back: share %d, budget %d", s.Used(), b.Used())
	}
}

// Offset counts what the reader has used up, blank lines and discarded
// lines included, never what it read ahead.
func TestReaderOffset(t *testing.T) {
	in := "\n{\"a\":1}\n\n\n" + strings.Repeat("x", 40) + "\n{}"
	r := NewReaderSize(strings.NewReader(in), 16)
	if line, err := r.Read(); err != nil || string(line) != `{"a":1}` || r.Offset() != 9 {
		t.Fatalf("%q %v at %d", line, err, r.Offset())
	}
	if _, err := r.Read(); !errors.Is(err, ErrTooLarge) || r.Offset() != int64(len(in)-2) {
		t.Fatalf("%v at %d", err, r.Offset())
	}
	if line, err := r.Read(); err != nil || string(line) != "{}" || r.Offset() != int64(len(in)) {
		t.Fatalf("%q %v at %d", line, err, r.Offset())
	}
}

// A line over the limit is dropped but its head is kept, whether the
// limit is crossed in the first chunk read or after many; the next line
// clears it.
func TestHeadOfTooLargeLine(t *testing.T) {
	for _, limit := range []int{100, 200 << 10} {
		big := `{"jsonrpc":"2.0","id":5,"result":"` + strings.Repeat("x", limit+HeadSize) + `"}`
		r := NewReaderSize(strings.NewReader(big+"\n{\"id\":6}\n"), limit)
		if _, err := r.Read(); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if h := string(r.Head()); h != big[:HeadSize] {
			t.Fatalf("limit %d: head %d bytes %.40q", limit, len(h), h)
		}
		line, err := r.Read()
		if err != nil || string(line) != `{"id":6}` || len(r.Head()) != 0 {
			t.Fatalf("limit %d: next line %q %v, head %q", limit, line, err, r.Head())
		}
	}
}

// With WholeLines a stream that ends inside a line reports ErrCut instead
// of handing the cut line over; without it the last line may lack its
// newline, as a client's may.
func TestWholeLines(t *testing.T) {
	for _, tc := range []struct {
		in    string
		whole bool
		want  []string
		end   error
	}{
		{"a\nb", false, []string{"a", "b"}, io.EOF},
		{"a\nb", true, []string{"a"}, ErrCut},
		{"a\nb\n", true, []string{"a", "b"}, io.EOF},
		{"a\n\n", true, []string{"a"}, io.EOF},
		{"", true, nil, io.EOF},
	} {
		r := NewReader(strings.NewReader(tc.in))
		if tc.whole {
			r.WholeLines()
		}
		var got []string
		var err error
		for {
			var line []byte
			if line, err = r.Read(); err != nil {
				break
			}
			got = append(got, string(line))
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || !errors.Is(err, tc.end) {
			t.Errorf("%q whole=%v: %q then %v, want %q then %v", tc.in, tc.whole, got, err, tc.want, tc.end)
		}
	}
}
