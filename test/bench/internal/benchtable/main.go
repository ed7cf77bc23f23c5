// Command benchtable runs hearth's benchmarks and prints
// docs/development.md's performance table from that one run (`just bench`). Each row names the
// benchmark, what it measures and its figures; a comparison with a peer
// gives the range over the run's rounds, the two having taken turns.
//
//	go run ./test/bench/internal/benchtable [-run REGEXP] [-from FILE] [-save FILE]
//
// -run keeps the rows whose benchmark matches; -from prints the table from
// the output of an earlier run (saved with -save) instead of running.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// metrics are one benchmark's reported figures, by unit.
type metrics map[string]float64

// row is one line of the table.
type row struct {
	pkg, bench, benchtime string
	env                   []string
	name, measures        string
	// figures words the row's figures; sub gives a sub-benchmark's.
	figures func(m metrics, sub func(string) metrics) string
}

var rows = []row{
	{pkg: "./test/bench", bench: "PingSocket", benchtime: "20000x", name: "`PingSocket`",
		measures: "ping round trip over the socket, sequential",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("p50 %s µs, p99 %s µs", n(m["p50-µs"]), n(m["p99-µs"]))
		}},
	{pkg: "./test/bench", bench: "HTTPVsSocket", benchtime: "5000x", name: "`HTTPVsSocket`",
		measures: "ping and a `daemon_status` call, one at a time, over the socket, over a 2025 Streamable HTTP session (JSON replies, a kept-alive connection) and as 2026-07-28 HTTP requests; interleaved",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("ping p50: socket %s µs, HTTP %s µs (%s×); call p50: socket %s µs, HTTP %s µs (%s×), 2026-07-28 HTTP %s µs (%s×)",
				n(m["socket-ping-p50-µs"]), n(m["http-ping-p50-µs"]), x(m["http/socket-ping-x"]),
				n(m["socket-call-p50-µs"]), n(m["http-call-p50-µs"]), x(m["http/socket-call-x"]),
				n(m["http2026-call-p50-µs"]), x(m["http2026/socket-call-x"]))
		}},
	{pkg: "./test/bench", bench: "PingDuringBuild", benchtime: "20000x", name: "`PingDuringBuild`",
		measures: "sequential pings on the connection that is running a full `index_build` of Go's source tree, vs the same connection idle",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("during the build p50 %s µs, p99 %s µs (target p99 ≤ 50 ms); idle p50 %s µs",
				n(m["during-build-p50-µs"]), n(m["during-build-p99-µs"]), n(m["idle-p50-µs"]))
		}},
	{pkg: "./test/bench", bench: "ConcurrentSearch", benchtime: "300x", name: "`ConcurrentSearch`",
		measures: "one `search` alone vs two sent together on one connection (Go's source tree, limit 5)",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("two together take %s× one (p50 %s vs %s ms); a FIFO would be ≥ 2×",
				x(m["two-over-one-x"]), ms(m["two-together-p50-µs"]), ms(m["one-p50-µs"]))
		}},
	{pkg: "./test/bench", bench: "ShimVsPeers", benchtime: "18000x", name: "`ShimVsPeers`",
		measures: "ping and `diff_assets` of two small documents, one at a time, through the shim (the client's pipes handed to the daemon), the shim relaying frames, the daemon's socket, `hearthd stdio`, a go-sdk server spawned directly; interleaved, nine rounds",
		figures: func(m metrics, _ func(string) metrics) string {
			var parts []string
			for _, req := range []struct{ key, name string }{{"ping", "ping"}, {"diff", "`diff_assets`"}} {
				k := req.key + "-"
				parts = append(parts, fmt.Sprintf("%s p50: shim %s µs, relay %s, socket %s, `hearthd stdio` %s, go-sdk %s; shim/stdio %s×, go-sdk/shim %s×, relay/shim %s×",
					req.name, rng(m, k+"shim-p50", "µs", n), rng(m, k+"relay-p50", "µs", n), rng(m, k+"socket-p50", "µs", n),
					rng(m, k+"stdio-p50", "µs", n), rng(m, k+"gosdk-p50", "µs", n),
					rng(m, k+"shim-over-stdio", "x", x), rng(m, k+"gosdk-over-shim", "x", x), rng(m, k+"relay-over-shim", "x", x)))
			}
			return strings.Join(parts, "; ")
		}},
	{pkg: "./test/bench", bench: "SessionsPSS", benchtime: "50000x", name: "`SessionsPSS`",
		measures: "ten sessions through shims vs ten go-sdk servers spawned directly, side by side: PSS once attached (initialize, tools/list) and after 50 `diff_assets` calls and pings each; three rounds",
		figures: func(m metrics, _ func(string) metrics) string {
			f := func(phase string) string {
				return fmt.Sprintf("ten shims %s MB, and with what they grew the daemon by %s MB (with the daemon's whole base %s MB), against ten go-sdk servers %s MB",
					rng(m, phase+"shims-PSS", "MB", d1), rng(m, phase+"sessions-cost-PSS", "MB", d1), rng(m, phase+"with-daemon-PSS", "MB", d1),
					rng(m, phase+"gosdk-PSS", "MB", d1))
			}
			return fmt.Sprintf("attached: %s; after use: %s; a shim's RSS %s MB", f("attached-"), f("used-"), d1(m["used-shim-max-RSS-MB"]))
		}},
	{pkg: "./test/bench", bench: "ShimUnderLoad", benchtime: "20000x", name: "`ShimUnderLoad`",
		measures: "one client pipelining pings, `diff_assets` and a `tools/list` every 50, 32 in flight, through a shim; its peak RSS, three rounds",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("peak RSS %s MB handing the pipes over (target < 4 MB), %s MB relaying; %s vs %s req/s",
				rng(m, "shim-max-RSS", "MB", d1), rng(m, "relay-max-RSS", "MB", d1), rng(m, "shim", "req/s", k), rng(m, "relay", "req/s", k))
		}},
	{pkg: "./test/bench", bench: "Aggregate64", benchtime: "200000x", name: "`Aggregate64`",
		measures: "requests/s with 64 pipelining connections, five rounds of 200 000",
		figures:  func(m metrics, _ func(string) metrics) string { return rng(m, "req/s", "", k) + " req/s" }},
	{pkg: "./test/bench", bench: "ToolCallVsGoSDK", benchtime: "18000x", name: "`ToolCallVsGoSDK`",
		measures: "the same tool (`daemon_status`) and ping over stdio, hearth vs a go-sdk server; interleaved, nine rounds",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("p50: calls %s vs %s µs (%s× faster), ping %s vs %s µs (%s×)",
				rng(m, "hearth-call-p50", "µs", n), rng(m, "gosdk-call-p50", "µs", n), rng(m, "call-speedup", "x", x),
				rng(m, "hearth-ping-p50", "µs", n), rng(m, "gosdk-ping-p50", "µs", n), rng(m, "ping-speedup", "x", x))
		}},
	{pkg: "./test/bench", bench: "MemoryBounds", benchtime: "1x", name: "`MemoryBounds`",
		measures: "daemon RSS with four clients flooding 1 MiB frames without reading, then a 1 000-connection burst of half-sent 1 MiB lines: peak, and 12 s after they leave",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("before %s MB; flood peak %s MB, after %s MB; burst peak %s MB, after %s MB",
				n(m["before-MB"]), n(m["flood-peak-MB"]), n(m["flood-after-MB"]), n(m["burst-peak-MB"]), n(m["burst-after-MB"]))
		}},
	{pkg: "./test/bench", bench: "ShimAttach", benchtime: "60x", name: "`ShimAttach`",
		measures: "exec `hearth`, initialize, tools/list, exit, vs a cold `hearthd stdio`, alternating, three rounds",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("p50 %s ms, %s× faster than a cold `hearthd stdio` (%s ms); shim RSS %s MB",
				rng(m, "shim-attach-p50", "µs", ms), rng(m, "attach-speedup", "x", x), rng(m, "cold-stdio-attach-p50", "µs", ms), d1(m["shim-max-RSS-kB"]/1024))
		}},
	{pkg: "./test/bench", bench: "EraAttach", benchtime: "60x", name: "`EraAttach`",
		measures: "exec `hearth` to the first tool result: `server/discover` + `tools/call` (2026-07-28) vs `initialize` + `initialized` + `tools/call` (2025), alternating, one warm daemon",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("p50 %s ms modern vs %s ms legacy (legacy/modern %s×); p99 %s vs %s ms",
				ms(m["modern-attach-p50-µs"]), ms(m["legacy-attach-p50-µs"]), x(m["legacy/modern-x"]), ms(m["modern-attach-p99-µs"]), ms(m["legacy-attach-p99-µs"]))
		}},
	{pkg: "./test/bench", bench: "ValidateVsPeers", benchtime: "20000x", name: "`ValidateVsPeers`",
		measures: "corpus validation vs ajv (2020-12, warmed up) and Python jsonschema, in turn, five rounds: documents decoded once, and from text (decode included, ajv with `JSON.parse`)",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("decoded: %s/s, %s× ajv, %s× Python; from text: %s/s, %s× ajv",
				rng(m, "validations/s", "", k), rng(m, "x", "ajv", x), rng(m, "x", "python", n), rng(m, "text", "validations/s", k), rng(m, "x-ajv", "text", x))
		}},
	{pkg: "./test/bench", bench: "ValidateAssetVsAjvServer", benchtime: "9000x", name: "`ValidateAssetVsAjvServer`",
		measures: "`validate_asset` over stdio, whole calls, vs the same tool built with the TypeScript SDK's `McpServer` and ajv (`test/ts/ajv_server.mjs`), same frames; interleaved, nine rounds",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("p50 %s vs %s µs (%s×); p99 %s vs %s ms (%s×)",
				rng(m, "hearth-p50", "µs", n), rng(m, "ajv-server-p50", "µs", n), rng(m, "speedup-p50", "x", x),
				rng(m, "hearth-p99", "µs", ms), rng(m, "ajv-server-p99", "µs", ms), rng(m, "speedup-p99", "x", x))
		}},
	{pkg: "./pkg/schemas", bench: "ValidateAssetCall", benchtime: "20000x", name: "`pkg/schemas` `BenchmarkValidateAssetCall`",
		measures: "one `validate_asset` call after its frame is read (argument check, handler)",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("%s µs a call", n(m["ns/op"]/1e3))
		}},
	{pkg: "./pkg/jsonval", bench: "DecodeCorpus", benchtime: "2000x", name: "`pkg/jsonval` `BenchmarkDecodeCorpus`",
		measures: "decoding the corpus examples",
		figures: func(_ metrics, sub func(string) metrics) string {
			return fmt.Sprintf("%s MB/s; `encoding/json` into maps: %s MB/s", n(sub("jsonval")["MB/s"]), n(sub("encoding-json")["MB/s"]))
		}},
	{pkg: "./test/bench", bench: "SearchMemoryVsOfficial", benchtime: "1000x", name: "`SearchMemoryVsOfficial`",
		measures: "`search_memory` at 10 000 over stdio vs the official memory server's `search_nodes`, same queries; interleaved, five rounds",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("p50 %s vs %s ms (%s×); p99 %s vs %s ms",
				rng(m, "hearth-p50", "µs", ms), rng(m, "official-p50", "µs", ms), rng(m, "speedup", "x", x), rng(m, "hearth-p99", "µs", ms), rng(m, "official-p99", "µs", ms))
		}},
	{pkg: "./test/bench", bench: "AddMemorySocket", benchtime: "10000x", name: "`AddMemorySocket`",
		measures: "durable `add_memory` through the socket, one request in flight per connection",
		figures: func(_ metrics, sub func(string) metrics) string {
			return fmt.Sprintf("1 connection: %s/s (one fsync each); 16: %s/s", k(sub("conns=1")["adds/s"]), k(sub("conns=16")["adds/s"]))
		}},
	{pkg: "./pkg/memory/sqlitestore", bench: "Search10k|Search100k", name: "`pkg/memory/sqlitestore` `BenchmarkSearch10k`/`100k`",
		measures: "store search (limit 10, 1–3 words, half tag-filtered) over the synthetic Zipf corpus (`1M` needs `HEARTH_BENCH_1M=1`)",
		figures: func(_ metrics, sub func(string) metrics) string {
			a, z := sub("#Search10k"), sub("#Search100k")
			return fmt.Sprintf("p50/p99: %s/%s ms at 10 k, %s/%s ms at 100 k; the index is rebuilt at open in %s s at 100 k",
				d2(a["p50-ms"]), d2(a["p99-ms"]), d2(z["p50-ms"]), d2(z["p99-ms"]), d1(z["reopen-s"]))
		}},
	{pkg: "./test/bench", bench: "IndexBuildGoSource", benchtime: "1x", name: "`IndexBuildGoSource`",
		measures: "`index_build` of `$(go env GOROOT)/src`, whole call",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("%s MB/s; worker peak RSS %s MB", n(m["MB/s"]), n(m["worker-peak-RSS-MB"]))
		}},
	{pkg: "./test/bench", bench: "SearchVsRipgrep", benchtime: "360x", name: "`SearchVsRipgrep`",
		measures: "`search` over that index vs `rg -i` on 12 fixed literal/identifier/regex queries, in turn, three rounds",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("p50 %s vs %s ms (%s×); p99 %s ms",
				rng(m, "hearth-p50", "µs", ms), rng(m, "rg-p50", "µs", ms), rng(m, "speedup", "x", n), rng(m, "hearth-p99", "µs", ms))
		}},
	{pkg: "./pkg/schemas/jsondiff", bench: "Diff", benchtime: "200x", name: "`pkg/schemas/jsondiff` `BenchmarkDiff`",
		measures: "corpus diffs vs wI2L/jsondiff (sub-benchmarks one after the other)",
		figures: func(_ metrics, sub func(string) metrics) string {
			return fmt.Sprintf("from decoded documents (`jsonval` documents, against wI2L on `encoding/json` values): %s× faster; from text (decode included): %s×",
				x(sub("values/wI2L")["ns/op"]/sub("docs/hearth")["ns/op"]), x(sub("json/wI2L")["ns/op"]/sub("json/hearth")["ns/op"]))
		}},
	{pkg: "./pkg/schemas", bench: "DiffAssetsCall", benchtime: "5000x", name: "`pkg/schemas` `BenchmarkDiffAssetsCall`",
		measures: "one `diff_assets` call on a corpus example and an edited copy (arguments decoded as a frame is, checked, diffed, result encoded)",
		figures: func(m metrics, _ func(string) metrics) string {
			return fmt.Sprintf("%s ms a call, %s allocations", d2(m["ns/op"]/1e6), n(m["allocs/op"]))
		}},
}

func main() {
	only := flag.String("run", "", "only the rows whose benchmark matches this regexp")
	from := flag.String("from", "", "print the table from this saved output instead of running")
	save := flag.String("save", "", "also save the benchmarks' output here")
	flag.Parse()
	var keep *regexp.Regexp
	if *only != "" {
		keep = regexp.MustCompile(*only)
	}
	var out bytes.Buffer
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	// The run's circumstances, kept with a saved run for -from.
	run := fmt.Sprintf("%s, commit %s, %d cores, load average %s at the start", time.Now().Format("2006-01-02"),
		strings.TrimSpace(string(commit)), runtime.NumCPU(), loadavg())
	if *from != "" {
		b, err := os.ReadFile(*from)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		out.Write(b)
	} else {
		for _, r := range rows {
			if keep != nil && !keep.MatchString(r.bench) {
				continue
			}
			args := []string{"test", r.pkg, "-run", "^$", "-bench", "^Benchmark(" + r.bench + ")$", "-count", "1", "-timeout", "60m"}
			if r.benchtime != "" {
				args = append(args, "-benchtime", r.benchtime)
			}
			fmt.Fprintf(os.Stderr, "benchtable: go %s\n", strings.Join(args, " "))
			cmd := exec.Command("go", args...)
			cmd.Env = append(os.Environ(), r.env...)
			cmd.Stdout = io.MultiWriter(&out, os.Stderr)
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "benchtable: %s: %v\n", r.bench, err)
			}
		}
		run += ", " + loadavg() + " at the end"
		if *save != "" {
			os.WriteFile(*save, append([]byte(runPrefix+run+"\n"), out.Bytes()...), 0o644)
		}
	}
	if i := bytes.Index(out.Bytes(), []byte(runPrefix)); i >= 0 {
		line, _, _ := strings.Cut(string(out.Bytes()[i+len(runPrefix):]), "\n")
		run = line
	}
	results := parse(out.Bytes())
	fmt.Printf("Figures from one `just bench` run (%s); a range is the lowest and highest round of an interleaved comparison.\n\n", run)
	fmt.Println("| benchmark | measures | figures |")
	fmt.Println("|---|---|---|")
	for _, r := range rows {
		if keep != nil && !keep.MatchString(r.bench) {
			continue
		}
		m, ok := results[r.bench]
		subs := func(name string) metrics {
			if strings.HasPrefix(name, "#") {
				return results[strings.TrimPrefix(name, "#")]
			}
			return results[r.bench+"/"+name]
		}
		figures := "(not run)"
		if ok || hasSub(results, r.bench) {
			figures = r.figures(m, subs)
		}
		fmt.Printf("| %s | %s | %s |\n", r.name, r.measures, figures)
	}
}

func hasSub(results map[string]metrics, bench string) bool {
	for name := range results {
		if strings.HasPrefix(name, bench+"/") || strings.Contains(bench, "|") && regexp.MustCompile("^("+bench+")$").MatchString(name) {
			return true
		}
	}
	return false
}

// runPrefix starts the line a saved run begins with: when and where it ran.
const runPrefix = "benchtable run: "

// parse reads `go test -bench` output: "BenchmarkName/sub-2  N  v unit  v unit ...".
func parse(out []byte) map[string]metrics {
	res := map[string]metrics{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	procs := regexp.MustCompile(`-\d+$`)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := procs.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), "")
		m := metrics{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[f[i+1]] = v
			}
		}
		res[name] = m
	}
	return res
}

// rng words a figure reported as a spread (bench's reportSpread): its
// lowest and highest round, reported as base-lo-unit and base-hi-unit (or
// base-lo and base-hi when the name has no unit after a dash).
func rng(m metrics, base, unit string, format func(float64) string) string {
	if unit == "" {
		return span(m[base+"-lo"], m[base+"-hi"], format)
	}
	return span(m[base+"-lo-"+unit], m[base+"-hi-"+unit], format)
}

func span(lo, hi float64, format func(float64) string) string {
	if a, b := format(lo), format(hi); a != b {
		return a + "–" + b
	}
	return format(lo)
}

// n is a whole number, d1 and d2 one and two decimals, ms microseconds as
// milliseconds, x a ratio, k a rate with thin spaces between thousands.
func n(v float64) string  { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }
func d1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func d2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
func ms(v float64) string {
	if v >= 10e3 {
		return d1(v / 1e3)
	}
	return d2(v / 1e3)
}
func x(v float64) string {
	if v >= 10 {
		return n(v)
	}
	return d2(v)
}
func k(v float64) string {
	s := n(v)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ' ')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
