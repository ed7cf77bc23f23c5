package validate

import (
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// cpuTime is the CPU time the process has used so far, where the system
// says it (cputime_unix_test.go sets it in its init); elsewhere (Windows)
// it is -1 and the benchmark reports wall time only.
var cpuTime = func() time.Duration { return -1 }

// BenchmarkRejectMillionDigits is the CPU time to reject a 1 MB frame's
// arguments holding one 1 000 000-digit number, decode included: an
// integer argument with bounds, as search_memory's limit, against a number
// far above them, and a fraction that ties with a bound as a float64.
// cpu-ns/op is the process's CPU time (the garbage collector's included)
// per rejection.
func BenchmarkRejectMillionDigits(b *testing.B) {
	s := mustCompile(b, `{"type":"object","additionalProperties":false,"required":["query"],"properties":{`+
		`"query":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":100}}}`)
	for _, c := range []struct{ name, number string }{
		{"integer", "1" + strings.Repeat("7", 999_999)},
		{"fraction", "1." + strings.Repeat("0", 999_997) + "1"},
	} {
		frame := []byte(`{"query":"x","limit":` + c.number + `}`)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(frame)))
			cpu := cpuTime()
			for b.Loop() {
				d, err := jsonval.Parse(frame)
				if err != nil {
					b.Fatal(err)
				}
				if vs := s.Validate(d, nil); len(vs) != 1 || vs[0].Path != "/limit" {
					b.Fatalf("want one violation at /limit, got %v", vs)
				}
			}
			if cpu >= 0 {
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
