//go:build linux

package handoff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// sent is one frame of the client's input.
type sent struct {
	text     string // with its newline
	end      int64  // stream offset just past it
	id       string // a request's id text ("" otherwise)
	cancels  string // the id key a notifications/cancelled names
	initiate bool   // the session's initialize
}

// clientStream makes a session's input: an opening, requests with short,
// long and duplicated ids, cancellations, blank and malformed lines, and
// (when long) a line over frame.MaxLine.
func clientStream(rng *rand.Rand, n int, long bool) ([]sent, []byte) {
	var out []sent
	var buf bytes.Buffer
	add := func(s sent) {
		buf.WriteString(s.text)
		s.end = int64(buf.Len())
		out = append(out, s)
	}
	if rng.Intn(3) == 0 {
		add(sent{text: `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{}}}` + "\n", id: `"d"`})
	} else {
		add(sent{text: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}` + "\n", id: "0", initiate: true})
		add(sent{text: `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"})
	}
	for i := 1; i <= n; i++ {
		switch k := rng.Intn(20); {
		case k == 0:
			add(sent{text: strings.Repeat("\n", 1+rng.Intn(200))})
		case k == 1:
			add(sent{text: "not json\n"})
		case k == 2 && i > 3:
			victim := rng.Intn(i-1) + 1
			add(sent{text: fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n", victim), cancels: fmt.Sprint(victim)})
		case k == 3:
			id := fmt.Sprintf(`"%s-%d"`, strings.Repeat("long", 40), i) // longer than a slot holds
			add(sent{text: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{}}`+"\n", id), id: id})
		case k == 4 && long && rng.Intn(n/100) == 0:
			// Over the limit (discarded, answered too large), or just under it.
			size := frame.MaxLine + rng.Intn(frame.MaxLine)
			if rng.Intn(2) == 0 {
				size = frame.MaxLine - 100
			}
			id := fmt.Sprintf(`"big%d"`, i)
			s := sent{text: `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"p":"` + strings.Repeat("x", size) + `"}}` + "\n"}
			if len(s.text) <= frame.MaxLine+1 {
				s.id = id
			}
			add(s)
		default:
			id := fmt.Sprint(i)
			if rng.Intn(10) == 0 {
				id = fmt.Sprint(i - 1) // a duplicate of the one before, perhaps in flight
			}
			pad := strings.Repeat("p", rng.Intn(300))
			add(sent{text: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping","params":{"pad":%q}}`+"\n", id, pad), id: id})
		}
	}
	return out, buf.Bytes()
}

// chunkReader delivers a stream in pieces of random size, the way a pipe
// does, and says how much it has delivered. after runs once a piece has
// been copied into the caller's buffer, before Read returns: a crash there
// is one after the read system call and before anything else.
type chunkReader struct {
	rng       *rand.Rand
	data      []byte
	delivered int
	after     func()
	// midLine: no piece ends a line, so the reader always has one in
	// progress and the journal never empties before its end.
	midLine bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.delivered == len(c.data) {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data)-c.delivered, 1+c.rng.Intn(6000))
	if c.midLine && c.data[c.delivered+n-1] == '\n' && c.delivered+n < len(c.data) && n < len(p) {
		n++
	}
	copy(p, c.data[c.delivered:c.delivered+n])
	c.delivered += n
	if c.after != nil {
		c.after()
	}
	return n, nil
}

// clientOut is the client's stdout: the replies it has received whole, and
// the start of a line whose rest has not come.
type clientOut struct {
	got  map[string]int // id text → replies received
	tail []byte
}

func (o *clientOut) take(b []byte) {
	o.tail = append(o.tail, b...)
	for {
		i := bytes.IndexByte(o.tail, '\n')
		if i < 0 {
			return
		}
		countReplies(o.got, o.tail[:i+1])
		o.tail = o.tail[i+1:]
	}
}

// countReplies adds the replies in whole lines b to got.
func countReplies(got map[string]int, b []byte) {
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if from, to, ok := ResponseID(bytes.TrimSuffix(line, []byte("\n"))); ok {
			got[string(line[from:to])]++
		}
	}
}

// stageOutlet is the staging pipe and its move to stdout, in memory: a
// batch is staged whole, then moved in pieces of random size (as splice
// moves what stdout has room for), and a crash may come after the stage
// and after every piece.
type stageOutlet struct {
	rng    *rand.Rand
	staged []byte
	out    *clientOut
	crash  func()
}

func (s *stageOutlet) Stage(batch []byte) error {
	if len(s.staged) != 0 {
		return errors.New("staged into a pipe that is not empty")
	}
	s.staged = append(s.staged, batch...)
	s.crash() // written into the staging pipe, before the region records it
	return nil
}

func (s *stageOutlet) Move(n int) error {
	if n != len(s.staged) {
		return fmt.Errorf("move %d of %d staged bytes", n, len(s.staged))
	}
	for len(s.staged) > 0 {
		k := 1 + s.rng.Intn(len(s.staged))
		s.out.take(s.staged[:k])
		s.staged = s.staged[k:]
		s.crash() // in stdout, the last piece before the region records it
	}
	s.staged = s.staged[:0:0]
	return nil
}

// TestCrashAtAnyInstantAccountsForEveryRequest runs a session over the
// region and, at every store the shim may rely on (and after every read),
// does what the shim does when the daemon dies: every request the client
// sent is then answered (received, or staged for the shim to write on), in
// flight, or still in the recovered input, and exactly one of them; the
// client never holds part of a line the shim cannot complete; the input recovered is exactly what was read and not
// taken in; the opening is there once it was taken in.
func TestCrashAtAnyInstantAccountsForEveryRequest(t *testing.T) {
	for seed := int64(1); seed <= 24; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { crashRun(t, seed, 300, false, 1) })
	}
}

// TestCrashAcrossTheJournalsEnd: sessions long enough to fill the journal,
// with lines just under and over frame.MaxLine, so that a line still being
// read is moved to the start and an over-long one given up; one instant in
// forty is checked.
func TestCrashAcrossTheJournalsEnd(t *testing.T) {
	seeds := int64(2)
	if testing.Short() {
		seeds = 1 // the race detector's run (-short): one seed's crash points
	}
	for seed := int64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { crashRun(t, seed, 12000, true, 40) })
	}
}

func crashRun(t *testing.T, seed int64, n int, long bool, every int) {
	rng := rand.New(rand.NewSource(seed))
	frames, stream := clientStream(rng, n, long)
	r, f, err := Create()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_ = f
	told := Told{Tracked: map[uint64]Owed{}, Replying: map[uint64]bool{}, Written: map[uint64]bool{}}
	ctl := func(kind byte, parts ...[]byte) error {
		p := bytes.Join(parts, nil)
		switch kind {
		case MsgTrack:
			seq, rest, _ := ParseU64(p)
			end, id, _ := ParseU64(rest)
			told.Tracked[seq] = Owed{ID: append([]byte(nil), id...), Seq: seq, End: int64(end)}
		case MsgReplying:
			seq, _, _ := ParseU64(p)
			told.Replying[seq] = true
		case MsgUntrack:
			seq, _, _ := ParseU64(p)
			delete(told.Tracked, seq)
			delete(told.Replying, seq)
		case MsgOpening:
			end, line, _ := ParseU64(p)
			told.Opening, told.OpenedAt = append([]byte(nil), line...), int64(end)
		}
		return nil
	}
	src := &chunkReader{rng: rng, data: stream, midLine: long}
	out := &clientOut{got: map[string]int{}}
	j := NewJournal(r, src)
	tr := NewTracker(r, j, ctl)
	stage := &stageOutlet{rng: rng, out: out}
	// Batches of up to 4 KiB, so that replies longer than that (a few
	// in 15) are handed to the shim.
	w := &Writer{Out: stage, Limit: 4096, T: tr, Big: func(seq uint64, line []byte) error {
		if len(out.tail) != 0 {
			return errors.New("a frame handed to the shim while a batch is part-written")
		}
		out.take(append(line, '\n'))
		if seq != 0 {
			told.Written[seq] = true
		}
		return nil
	}}
	cancelled := map[string]bool{} // id keys whose cancellation was taken in
	// Crash points checked while a batch's bytes were staged and the region
	// did not yet say so, and once they had all reached stdout and the
	// region still said staged: the instants between a reply's write and
	// its record.
	var stagedUnrecorded, movedUnrecorded int
	checks := 0
	check := func() {
		if every > 1 && rng.Intn(every) != 0 {
			return
		}
		checks++
		st := r.Recover(told, stage.staged)
		// The shim writes the staged bytes on: with them, the client holds
		// whole lines only.
		shimWrites := append(append([]byte(nil), out.tail...), stage.staged...)
		if len(shimWrites) > 0 && shimWrites[len(shimWrites)-1] != '\n' {
			t.Fatalf("check %d: the client holds part of a line the staging pipe does not complete", checks)
		}
		shimWrote := map[string]int{}
		countReplies(shimWrote, shimWrites)
		switch recorded := r.load32(offStaged) != 0; {
		case len(stage.staged) > 0 && !recorded:
			stagedUnrecorded++
		case len(stage.staged) == 0 && recorded:
			movedUnrecorded++
		}
		taken := int64(src.delivered - len(st.Input))
		if !bytes.Equal(st.Input, stream[taken:src.delivered]) {
			t.Fatalf("check %d: recovered input is not what was read and not taken in", checks)
		}
		inFlight := map[string]int{}
		for _, o := range st.InFlight {
			inFlight[string(o.ID)]++
		}
		want := map[string]int{} // requests taken in, by id
		for _, fr := range frames {
			if fr.end > taken {
				if fr.end-int64(len(fr.text)) < taken && !st.InLongLine {
					t.Fatalf("check %d: taken in up to %d, inside the frame ending at %d", checks, taken, fr.end)
				}
				break
			}
			if fr.id != "" {
				want[fr.id]++
			}
		}
		for id, n := range want {
			if cancelled[envelope.Key([]byte(id))] {
				continue // no reply comes for it, and it may have had one
			}
			if received := out.got[id] + shimWrote[id]; received+inFlight[id] != n {
				t.Fatalf("check %d: request %s taken in %d times: %d replies, %d in flight", checks, id, n, received, inFlight[id])
			}
		}
		for id := range inFlight {
			if want[id] == 0 {
				t.Fatalf("check %d: %s in flight but not taken in", checks, id)
			}
		}
		var init *sent
		for i := range frames {
			if frames[i].initiate {
				init = &frames[i]
			}
		}
		wantOpening := init != nil && init.end <= taken
		if (st.Opening != nil) != wantOpening || (wantOpening && string(st.Opening)+"\n" != init.text) {
			t.Fatalf("check %d: opening %q, want one: %v", checks, st.Opening, wantOpening)
		}
		if st.Opened != (taken >= frames[0].end) || st.Modern != (st.Opened && frames[0].id == `"d"`) {
			t.Fatalf("check %d: opened %v modern %v", checks, st.Opened, st.Modern)
		}
	}
	r.afterStore = check
	src.after = check
	stage.crash = check

	fw := frame.NewWriter(w)
	fr := frame.NewReader(j)
	var pending []jsonrpc.ID
	answer := func(k int) {
		for ; k > 0 && len(pending) > 0; k-- {
			i := rng.Intn(len(pending))
			id := pending[i]
			pending = append(pending[:i], pending[i+1:]...)
			result := `{}`
			if rng.Intn(15) == 0 {
				result = `{"big":"` + strings.Repeat("b", 5000+rng.Intn(70000)) + `"}`
			}
			fw.WriteRaw(jsonrpc.ResultFrame(id, []byte(result)))
		}
		if rng.Intn(3) == 0 {
			fw.Flush()
			check()
		}
	}
	for {
		line, err := fr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, frame.ErrTooLarge) {
			took(tr, nil, nil, fr.Offset())
			fw.WriteRaw([]byte(jsonrpc.TooLargeFrame))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		msg, perr := jsonrpc.Parse(line)
		var key string
		if perr == nil && msg.Method == "notifications/cancelled" {
			// The tracker forgets the request as it takes the
			// cancellation in: from then on no reply is owed for it.
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			json.Unmarshal(msg.Params, &p)
			key = envelope.Key(p.RequestID)
			cancelled[key] = true
		}
		took(tr, msg, line, fr.Offset())
		switch {
		case perr != nil:
			fw.WriteRaw(jsonrpc.ErrorFrame(perr.ID, perr.Err))
		case msg.Kind == jsonrpc.Request:
			pending = append(pending, msg.ID)
		case key != "":
			for i, id := range pending {
				if id.Key() == key {
					pending = append(pending[:i], pending[i+1:]...)
					break
				}
			}
		}
		answer(rng.Intn(3))
	}
	answer(len(pending))
	fw.Flush()
	check()
	st := r.Recover(told, nil)
	if len(st.InFlight) != 0 || len(bytes.TrimSpace(st.Input)) != 0 { // trailing blank lines are never taken in
		t.Fatalf("after the session: %d in flight, %d bytes of input", len(st.InFlight), len(st.Input))
	}
	if checks < 100 || stagedUnrecorded == 0 || movedUnrecorded == 0 {
		t.Fatalf("only %d crash points checked (%d with a batch staged and not recorded, %d moved and still recorded)", checks, stagedUnrecorded, movedUnrecorded)
	}
	t.Logf("%d crash points checked, %d with a batch staged and not recorded, %d moved and still recorded", checks, stagedUnrecorded, movedUnrecorded)
}

// A read that a crash interrupts after the system call, before the journal
// says so, is found by its bytes: the journal is zero ahead of every read.
func TestRecoverFindsAnUnannouncedRead(t *testing.T) {
	r, _, err := Create()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Reset([]byte(`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{}}` + "\n"))
	j := NewJournal(r, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"))
	fr := frame.NewReader(j)
	if _, err := fr.Read(); err != nil { // the hello, from the journal
		t.Fatal(err)
	}
	j.Took(fr.Offset())
	var at State
	j.src = readerFunc(func(p []byte) (int, error) {
		n := copy(p, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
		at = r.Recover(Told{}, nil) // the daemon dies here
		return n, nil
	})
	if _, err := fr.Read(); err != nil {
		t.Fatal(err)
	}
	if string(at.Input) != `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n" {
		t.Fatalf("recovered %q", at.Input)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func TestResponseID(t *testing.T) {
	for line, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"result":{}}`:                          "7",
		`{"jsonrpc":"2.0","id":-3,"error":{"code":1,"message":"x"}}`:    "-3",
		`{"jsonrpc":"2.0","id":"a\"b","result":null}`:                   `"a\"b"`,
		`{"result":{},"jsonrpc":"2.0","id":"x"}`:                        `"x"`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`:  "",
		`{"jsonrpc":"2.0","method":"notifications/progress"}`:           "",
		`{"id":"hearth-roots-1","jsonrpc":"2.0","method":"roots/list"}`: "",
	} {
		from, to, ok := ResponseID([]byte(line))
		if got := line[from:to]; ok != (want != "") || got != want {
			t.Errorf("%s: %q %v, want %q", line, got, ok, want)
		}
	}
}

// took tells tr of a frame as a session does (mcp.Tracker): the parsed
// frame's parts, or none when msg is nil.
func took(tr *Tracker, msg *jsonrpc.Message, line []byte, end int64) {
	if msg == nil {
		tr.Took(0, jsonrpc.ID{}, "", nil, line, end)
		return
	}
	tr.Took(msg.Kind, msg.ID, msg.Method, msg.Params, line, end)
}
