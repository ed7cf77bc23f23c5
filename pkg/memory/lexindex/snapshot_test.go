package lexindex

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// fill adds n random memories, the same to each of ixs.
func fill(r *rand.Rand, z *rand.Zipf, key *int64, n int, ixs ...*Index) {
	for i := 0; i < n; i++ {
		mem := Memory{Key: *key, Workspace: []string{"default", "other"}[r.IntN(5)/4],
			Source: fmt.Sprintf("s%d", r.IntN(3)), Time: int64(r.IntN(1000))}
		for j := 0; j < r.IntN(3); j++ {
			mem.Tags = append(mem.Tags, fmt.Sprintf("t%d", r.IntN(4)))
		}
		*key++
		var chunks []Chunk
		for j := 0; j < 1+r.IntN(3)/2; j++ {
			chunks = append(chunks, Chunk{Key: *key, Text: randomText(r, z, 5+r.IntN(60))})
			*key++
		}
		for _, ix := range ixs {
			ix.Add(mem, chunks)
		}
	}
}

func roundTrip(t *testing.T, ix *Index) (*Index, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := ix.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	b := append(make([]byte, 0, buf.Len()), buf.Bytes()...)
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return got, b
}

// TestEncodeDecode: a decoded index answers every query exactly as the one
// encoded, and stays so while both take the same adds and deletes (appends
// to the decoded arrays must not write into the snapshot's bytes).
func TestEncodeDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	z := rand.NewZipf(r, 1.2, 1, 2000)
	orig := New()
	var key int64 = 1
	fill(r, z, &key, 2000, orig)
	for i := 0; i < 100; i++ {
		orig.Delete(int64(1 + r.IntN(int(key))))
	}
	dec, _ := roundTrip(t, orig)
	compare := func(stage string) {
		for q := 0; q < 200; q++ {
			words := []string{fmt.Sprintf("w%d", z.Uint64()), fmt.Sprintf("w%d", z.Uint64())}[:1+q%2]
			f := Filter{Workspace: "default"}
			if q%3 == 1 {
				f.Tags = []string{"t1"}
			}
			a, b := orig.Search(words, f, 10).Results, dec.Search(words, f, 10).Results
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: query %v: decoded index gives %v, want %v", stage, words, b, a)
			}
		}
	}
	compare("decoded")
	fill(r, z, &key, 1500, orig, dec)
	for i := 0; i < 50; i++ {
		k := int64(1 + r.IntN(int(key)))
		if orig.Delete(k) != dec.Delete(k) {
			t.Fatalf("Delete(%d) differs", k)
		}
	}
	compare("extended")
	// A second round trip of the extended index is still exact.
	again, _ := roundTrip(t, dec)
	dec = again
	compare("re-encoded")
}

func TestDecodeRejectsDamage(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	z := rand.NewZipf(r, 1.2, 1, 500)
	ix := New()
	var key int64 = 1
	fill(r, z, &key, 300, ix)
	var buf bytes.Buffer
	if err := ix.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for _, cut := range []int{0, 7, 8, 100, len(good) / 2, len(good) - 1} {
		if _, err := Decode(append([]byte(nil), good[:cut]...)); !errors.Is(err, ErrEncoding) {
			t.Errorf("truncated to %d bytes: err = %v, want ErrEncoding", cut, err)
		}
	}
	// Counts blown up to huge values are refused, never allocated.
	for _, at := range []int{0, 8, 16} {
		b := append([]byte(nil), good...)
		b[at+7] = 0x7f
		if _, err := Decode(b); err == nil {
			t.Errorf("count at %d corrupted: decoded anyway", at)
		}
	}
}
