package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// record is any JSON line of the other commands (and of bench/ts/calls.mjs).
type record struct {
	Kind     string `json:"kind"`
	Client   string `json:"client"`
	Host     string `json:"host"`
	Protocol string `json:"protocol"`

	Calls              int     `json:"calls"`
	Concurrency        int     `json:"concurrency"`
	CallsPerSec        float64 `json:"callsPerSec"`
	P50Us              float64 `json:"p50Us"`
	P99Us              float64 `json:"p99Us"`
	Truncated          bool    `json:"truncated"`
	ClientCPUUsPerCall float64 `json:"clientCPUUsPerCall"`
	HWMKiB             float64 `json:"vmHWMKiB"`
	AnonKiB            float64 `json:"rssAnonKiB"`
	FileKiB            float64 `json:"rssFileKiB"`

	Servers int `json:"servers"`

	startupResult
}

// benchLine is one parsed `go test -bench` result.
type benchLine struct {
	name                  string // e.g. "CallStdio/harness", without the -GOMAXPROCS suffix
	nsOp, bytesOp, allocs float64
}

// tableInput is everything the table is made of.
type tableInput struct {
	records   []record
	bench     []benchLine
	loadStart string
	loadEnd   string
}

func runTable(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("table", flag.ContinueOnError)
	loadStart := fs.String("load-start", "", "load average when the run started (/proc/loadavg)")
	loadEnd := fs.String("load-end", "", "load average when the run ended")
	gobench := fs.String("gobench", "", "`FILE` with the output of go test -bench CallStdio")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ti := tableInput{loadStart: *loadStart, loadEnd: *loadEnd}
	if err := decodeRecords(in, &ti); err != nil {
		return err
	}
	if *gobench != "" {
		f, err := os.Open(*gobench)
		if err != nil {
			return err
		}
		ti.bench = parseBench(f)
		_ = f.Close() // read only
	}
	_, err := io.WriteString(out, ti.render())
	return err
}

// decodeRecords appends the JSON lines of r to ti.records.
func decodeRecords(r io.Reader, ti *tableInput) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var rec record
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			return fmt.Errorf("results line %d: %w", line, err)
		}
		ti.records = append(ti.records, rec)
	}
	return sc.Err()
}

// parseBench reads go test -bench output, keeping the median of repeated results.
func parseBench(r io.Reader) []benchLine {
	byName := map[string][]benchLine{}
	var order []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		b := benchLine{name: name}
		for i := 2; i < len(f); i++ {
			v, err := strconv.ParseFloat(f[i-1], 64)
			if err != nil {
				continue
			}
			switch f[i] {
			case "ns/op":
				b.nsOp = v
			case "B/op":
				b.bytesOp = v
			case "allocs/op":
				b.allocs = v
			}
		}
		if b.nsOp == 0 {
			continue
		}
		if _, seen := byName[name]; !seen {
			order = append(order, name)
		}
		byName[name] = append(byName[name], b)
	}
	out := make([]benchLine, 0, len(order))
	for _, name := range order {
		bs := byName[name]
		med := func(get func(benchLine) float64) float64 {
			xs := make([]float64, len(bs))
			for i, b := range bs {
				xs[i] = get(b)
			}
			return median(xs)
		}
		out = append(out, benchLine{
			name:    name,
			nsOp:    med(func(b benchLine) float64 { return b.nsOp }),
			bytesOp: med(func(b benchLine) float64 { return b.bytesOp }),
			allocs:  med(func(b benchLine) float64 { return b.allocs }),
		})
	}
	return out
}

// callStat is one client at one concurrency: the values of every round, in run order.
type callStat struct {
	calls                  int
	rate, p50, p99, cpu, m []float64
	truncated              bool
}

func (ti *tableInput) calls(client string, conc int) (callStat, bool) {
	var st callStat
	for _, r := range ti.records {
		if r.Kind != "calls" || r.Client != client || r.Concurrency != conc {
			continue
		}
		st.rate = append(st.rate, r.CallsPerSec)
		st.p50 = append(st.p50, r.P50Us)
		st.p99 = append(st.p99, r.P99Us)
		st.cpu = append(st.cpu, r.ClientCPUUsPerCall)
		st.m = append(st.m, r.HWMKiB)
		st.calls = max(st.calls, r.Calls)
		st.truncated = st.truncated || r.Truncated
	}
	return st, len(st.rate) > 0
}

// med is the median of a metric over the rounds.
func med(xs []float64) cell { return cell{median(xs), len(xs) > 0} }

// paired is the median over rounds of a[k]/b[k]: the k-th runs of two clients ran next to
// each other, under the same load, so their ratio is steadier than the ratio of medians.
func paired(a, b []float64) cell {
	var rs []float64
	for k := range min(len(a), len(b)) {
		if b[k] > 0 {
			rs = append(rs, a[k]/b[k])
		}
	}
	return cell{median(rs), len(rs) > 0}
}

func (ti *tableInput) rss(client, host string, servers int) (float64, bool) {
	return ti.rssOf(client, host, servers, func(r record) float64 { return r.HWMKiB })
}

// rssOf is the median of f over the rss records of client, host and servers.
func (ti *tableInput) rssOf(client, host string, servers int, f func(record) float64) (float64, bool) {
	var xs []float64
	for _, r := range ti.records {
		if r.Kind == "rss" && r.Client == client && r.Servers == servers && (host == "" || r.Host == host) {
			xs = append(xs, f(r))
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return median(xs), true
}

func (ti *tableInput) startup() (startupResult, bool) {
	for _, r := range slices.Backward(ti.records) {
		if r.Kind == "startup" {
			st := r.startupResult
			st.Servers = r.Servers // the record's own field shadows the embedded one
			return st, true
		}
	}
	return startupResult{}, false
}

// cell is one value: missing values print as "n/a".
type cell struct {
	v  float64
	ok bool
}

func val(v float64, ok bool) cell { return cell{v, ok} }

// row is one line of the table. gogc is the harness with Go's defaults (GC and GOMAXPROCS).
type row struct {
	what                     string
	harness, gogc, gosdk, ts string
	ratio, goal, verdict     string
}

// verdict words.
const (
	yes = "yes"
	no  = "**no**"
)

func (ti *tableInput) render() string {
	var rows []row
	goals, met := 0, 0
	judge := func(ok, measurable bool) string {
		if !measurable {
			return "n/a"
		}
		goals++
		if ok {
			met++
			return yes
		}
		return no
	}

	for _, conc := range []int{1, 16} {
		h, _ := ti.calls("harness", conc)
		d, _ := ti.calls("harness-gogc100", conc)
		g, _ := ti.calls("gosdk", conc)
		t, _ := ti.calls("ts", conc)
		c := fmt.Sprintf("c=%d", conc)
		metric := func(what string, decimals int, get func(callStat) []float64) (row, cell, cell) {
			hg, ht := paired(get(h), get(g)), paired(get(h), get(t))
			ratio := pairRatios(hg, ht)
			if dg := paired(get(d), get(g)); dg.ok {
				ratio += fmt.Sprintf("; Go defaults: %.2f× go-sdk", dg.v)
			}
			return row{what: what + ", " + c,
				harness: num(med(get(h)), decimals), gogc: num(med(get(d)), decimals),
				gosdk: num(med(get(g)), decimals), ts: num(med(get(t)), decimals),
				ratio: ratio}, hg, ht
		}
		rate, rateG, rateT := metric("calls/s", 0, func(s callStat) []float64 { return s.rate })
		if conc == 1 {
			rate.goal = "≥ 0.95× go-sdk, ≥ 1× TS"
			rate.verdict = judge(rateG.v >= 0.95 && rateT.v >= 1, rateG.ok && rateT.ok)
		} else {
			rate.goal = "≥ 0.95× go-sdk, > 1× TS"
			rate.verdict = judge(rateG.v >= 0.95 && rateT.v > 1, rateG.ok && rateT.ok)
		}
		p50, _, _ := metric("p50 latency µs", 0, func(s callStat) []float64 { return s.p50 })
		p99, _, p99T := metric("p99 latency µs", 0, func(s callStat) []float64 { return s.p99 })
		p99.goal = "≤ 1× TS"
		p99.verdict = judge(p99T.v <= 1, p99T.ok)
		cpu, _, _ := metric("client CPU µs per call", 1, func(s callStat) []float64 { return s.cpu })
		rows = append(rows, rate, p50, p99, cpu)
		if conc > 1 {
			mem, _, _ := metric("client peak RSS MiB after the run", 1, func(s callStat) []float64 { return kibToMiB(s.m) })
			rows = append(rows, mem)
		}
	}

	h1, h1ok := ti.rss("harness", "ctx+toolregistry+mcpclient", 1)
	t1, t1ok := ti.rss("ts", "", 1)
	rows = append(rows, row{what: "peak RSS MiB, 1 server connected",
		harness: mib(val(h1, h1ok)), gosdk: "", ts: mib(val(t1, t1ok)),
		ratio: ratioTo(val(h1, h1ok), val(t1, t1ok), "TS")})
	var twenty int
	for _, r := range ti.records {
		if r.Kind == "rss" && r.Client == "harness" && r.Servers > 1 {
			twenty = r.Servers
		}
	}
	if twenty > 0 {
		h20, ok := ti.rss("harness", "ctx+toolregistry+mcpclient", twenty)
		rows = append(rows, row{what: fmt.Sprintf("peak RSS MiB, %d servers connected", twenty),
			harness: mib(val(h20, ok)), ratio: ratioTo(val(h20, ok), val(h1, h1ok), "1 server"),
			goal: "< 40 MiB", verdict: judge(h20 < 40*1024, ok)})
	}
	r1, r1ok := ti.rss("harness", "harness run", 1)
	if r1ok {
		rows = append(rows, row{what: "peak RSS MiB, `harness run`, 1 server",
			harness: mib(val(r1, r1ok)), ts: mib(val(t1, t1ok)), ratio: ratioTo(val(r1, r1ok), val(t1, t1ok), "TS")})
	}
	if twenty > 0 {
		if r20, ok := ti.rss("harness", "harness run", twenty); ok {
			rows = append(rows, row{what: fmt.Sprintf("peak RSS MiB, `harness run`, %d servers", twenty),
				harness: mib(val(r20, ok)), ratio: ratioTo(val(r20, ok), val(r1, r1ok), "1 server"),
				goal: "< 40 MiB", verdict: judge(r20 < 40*1024, ok)})
		}
	}
	// What the peak is made of: the binary's mapped pages (shared, and as large as the
	// binary is) and the process's own memory.
	for _, n := range []int{1, twenty} {
		if n == 0 {
			continue
		}
		anon, aok := ti.rssOf("harness", "harness run", n, func(r record) float64 { return r.AnonKiB })
		file, fok := ti.rssOf("harness", "harness run", n, func(r record) float64 { return r.FileKiB })
		if aok && anon > 0 {
			servers := "1 server"
			if n > 1 {
				servers = fmt.Sprintf("%d servers", n)
			}
			rows = append(rows, row{what: "of which its own (RssAnon) / the binary's mapped file (RssFile) MiB, `harness run`, " + servers,
				harness: mib(val(anon, true)) + " / " + mib(val(file, fok && file > 0))})
		}
	}

	if st, ok := ti.startup(); ok {
		one := val(st.OneMs, st.OneMs > 0)
		rows = append(rows,
			row{what: "startup ms, 1 server alone", harness: num(one, 1)},
			row{what: fmt.Sprintf("startup ms, %d servers in parallel", st.Servers), harness: num(val(st.ParallelMs, true), 1),
				ratio: ratioTo(val(st.ParallelMs, true), one, "1 server"),
				goal:  "< 1.5× 1 server", verdict: judge(st.ParallelMs < 1.5*st.OneMs, one.ok)},
			row{what: fmt.Sprintf("startup ms, %d servers one after another", st.Servers), harness: num(val(st.SequentialMs, true), 1),
				ratio: ratioTo(val(st.SequentialMs, true), one, "1 server") + "; " +
					ratioTo(val(st.SequentialMs, true), val(st.ParallelMs, st.ParallelMs > 0), "parallel")},
		)
	}

	bench := map[string]benchLine{}
	for _, b := range ti.bench {
		bench[b.name] = b
	}
	for _, v := range []struct{ name, label string }{{"CallStdio", "c=1"}, {"CallStdioC16", "c=16"}} {
		h, hok := bench[v.name+"/harness"]
		g, gok := bench[v.name+"/gosdk"]
		if !hok && !gok {
			continue
		}
		rows = append(rows,
			row{what: "go test -bench ns/op, " + v.label,
				harness: num(val(h.nsOp, hok), 0), gosdk: num(val(g.nsOp, gok), 0),
				ratio: ratioTo(val(h.nsOp, hok), val(g.nsOp, gok), "go-sdk")},
			row{what: "go test -bench B/op, " + v.label,
				harness: num(val(h.bytesOp, hok), 0), gosdk: num(val(g.bytesOp, gok), 0),
				ratio: ratioTo(val(h.bytesOp, hok), val(g.bytesOp, gok), "go-sdk")},
			row{what: "go test -bench allocs/op, " + v.label,
				harness: num(val(h.allocs, hok), 0), gosdk: num(val(g.allocs, gok), 0),
				ratio: ratioTo(val(h.allocs, hok), val(g.allocs, gok), "go-sdk")},
		)
	}

	var b strings.Builder
	b.WriteString("| measurement | harness | harness, Go defaults | go-sdk | TS SDK | ratio | goal | met |\n")
	b.WriteString("|---|---:|---:|---:|---:|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.what, r.harness, dash(r.gogc), dash(r.gosdk), dash(r.ts), dash(r.ratio), dash(r.goal), dash(r.verdict))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Goals met: %d of %d.\n", met, goals)
	if h, ok := ti.calls("harness", 1); ok {
		h16, _ := ti.calls("harness", 16)
		fmt.Fprintf(&b, "Calls: %s at c=1 and %s at c=16 per run; values are medians of %d runs per client, "+
			"ratios are medians of the ratios between runs made next to each other (same round).\n",
			num(val(float64(h.calls), true), 0), num(val(float64(h16.calls), true), 0), len(h.rate))
	}
	for _, client := range []string{"harness", "harness-gogc100", "gosdk", "ts"} {
		for _, conc := range []int{1, 16} {
			if st, ok := ti.calls(client, conc); ok && st.truncated {
				fmt.Fprintf(&b, "Note: some %s runs at c=%d hit the time bound and made fewer calls.\n", client, conc)
			}
		}
	}
	if protos := ti.protocols(); protos != "" {
		fmt.Fprintf(&b, "Protocol versions negotiated: %s.\n", protos)
	}
	if st, ok := ti.startup(); ok {
		fmt.Fprintf(&b, "Startup CPU (medians of %d rounds): 1 server %s ms of server CPU; %d servers %s ms of server CPU and %s ms in the host.\n",
			st.Rounds, num(val(st.OneServerCPUMs, true), 1), st.Servers,
			num(val(st.ParallelServerCPUMs, true), 1), num(val(st.ParallelHostCPUMs, true), 1))
	}
	if ti.loadStart != "" || ti.loadEnd != "" {
		fmt.Fprintf(&b, "Load average (1, 5, 15 min) at start: %s; at end: %s.\n", dash(ti.loadStart), dash(ti.loadEnd))
	}
	return b.String()
}

// protocols lists the protocol version each client reported.
func (ti *tableInput) protocols() string {
	seen := map[string]bool{}
	var out []string
	for _, r := range ti.records {
		if r.Kind != "calls" || r.Protocol == "" {
			continue
		}
		k := r.Client + " " + r.Protocol
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// num formats c with thousands separators and the given decimals.
func num(c cell, decimals int) string {
	if !c.ok {
		return "n/a"
	}
	s := strconv.FormatFloat(c.v, 'f', decimals, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var g strings.Builder
	for i, ch := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			g.WriteByte(',')
		}
		g.WriteRune(ch)
	}
	s = g.String()
	if neg {
		s = "-" + s
	}
	if frac != "" {
		s += "." + frac
	}
	return s
}

func mib(kib cell) string {
	if !kib.ok {
		return "n/a"
	}
	return num(cell{kib.v / 1024, true}, 1)
}

// ratioTo is "a/b× name".
func ratioTo(a, b cell, name string) string {
	if !a.ok || !b.ok || b.v == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f× %s", a.v/b.v, name)
}

// pairRatios formats the harness's ratios to go-sdk and to TS.
func pairRatios(hg, ht cell) string {
	var parts []string
	if hg.ok {
		parts = append(parts, fmt.Sprintf("%.2f× go-sdk", hg.v))
	}
	if ht.ok {
		parts = append(parts, fmt.Sprintf("%.2f× TS", ht.v))
	}
	return strings.Join(parts, ", ")
}

func kibToMiB(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x / 1024
	}
	return out
}
