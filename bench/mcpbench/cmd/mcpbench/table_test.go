package main

import (
	"bytes"
	"strings"
	"testing"
)

const sampleResults = `
{"kind":"calls","client":"harness","protocol":"2025-11-25","calls":100,"concurrency":1,"callsPerSec":2900,"p50Us":300,"p99Us":500,"clientCPUUsPerCall":40,"vmHWMKiB":16000}
{"kind":"calls","client":"gosdk","protocol":"2025-11-25","calls":100,"concurrency":1,"callsPerSec":3000,"p50Us":290,"p99Us":480,"clientCPUUsPerCall":35,"vmHWMKiB":15000}
{"kind":"calls","client":"ts","protocol":"2025-11-25","calls":100,"concurrency":1,"callsPerSec":2800,"p50Us":310,"p99Us":600,"clientCPUUsPerCall":60,"vmHWMKiB":80000}
{"kind":"calls","client":"harness","protocol":"2025-11-25","calls":100,"concurrency":1,"callsPerSec":1450,"p50Us":600,"p99Us":1000,"clientCPUUsPerCall":40,"vmHWMKiB":16000}
{"kind":"calls","client":"gosdk","protocol":"2025-11-25","calls":100,"concurrency":1,"callsPerSec":1500,"p50Us":580,"p99Us":960,"clientCPUUsPerCall":35,"vmHWMKiB":15000}
{"kind":"calls","client":"ts","protocol":"2025-11-25","calls":100,"concurrency":1,"callsPerSec":1400,"p50Us":620,"p99Us":1200,"clientCPUUsPerCall":60,"vmHWMKiB":80000}
{"kind":"calls","client":"harness-gogc100","protocol":"2025-11-25","calls":100,"concurrency":1,"callsPerSec":2800,"p50Us":310,"p99Us":520,"clientCPUUsPerCall":45,"vmHWMKiB":15000}
{"kind":"calls","client":"harness-gogc100","protocol":"2025-11-25","calls":100,"concurrency":1,"callsPerSec":1400,"p50Us":610,"p99Us":1040,"clientCPUUsPerCall":45,"vmHWMKiB":15000}
{"kind":"calls","client":"harness-gogc100","calls":400,"concurrency":16,"callsPerSec":5900,"p50Us":2100,"p99Us":5200,"clientCPUUsPerCall":33,"vmHWMKiB":16000}
{"kind":"calls","client":"harness","calls":400,"concurrency":16,"callsPerSec":6000,"p50Us":2000,"p99Us":5000,"clientCPUUsPerCall":30,"vmHWMKiB":17000}
{"kind":"calls","client":"gosdk","calls":400,"concurrency":16,"callsPerSec":6100,"p50Us":1900,"p99Us":4000,"clientCPUUsPerCall":25,"vmHWMKiB":16000}
{"kind":"calls","client":"ts","calls":400,"concurrency":16,"callsPerSec":5000,"p50Us":2500,"p99Us":9000,"clientCPUUsPerCall":50,"vmHWMKiB":90000}
{"kind":"rss","client":"harness","host":"ctx+toolregistry+mcpclient","servers":1,"vmHWMKiB":12288}
{"kind":"rss","client":"harness","host":"ctx+toolregistry+mcpclient","servers":20,"vmHWMKiB":20480}
{"kind":"rss","client":"harness","host":"harness run","servers":1,"vmHWMKiB":16384}
{"kind":"rss","client":"harness","host":"harness run","servers":20,"vmHWMKiB":45000,"rssAnonKiB":9216,"rssFileKiB":35784}
{"kind":"rss","client":"ts","host":"node","servers":1,"vmHWMKiB":69632}
{"kind":"startup","servers":20,"rounds":3,"oneMs":50,"parallelMs":500,"sequentialMs":1000,"oneServerCPUMs":45,"parallelServerCPUMs":900,"parallelHostCPUMs":100}
`

const sampleBench = `goos: linux
BenchmarkCallStdio/harness-2   	    3000	    310000 ns/op	  136000 B/op	      95 allocs/op
BenchmarkCallStdio/harness-2   	    3000	    300000 ns/op	  136000 B/op	      95 allocs/op
BenchmarkCallStdio/harness-2   	    3000	    320000 ns/op	  136000 B/op	      95 allocs/op
BenchmarkCallStdio/gosdk-2     	    3000	    290000 ns/op	  133000 B/op	      45 allocs/op
PASS
`

func TestTable(t *testing.T) {
	var out bytes.Buffer
	if err := runTable([]string{"-load-end", "0.50 0.60 0.70"}, strings.NewReader(sampleResults), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Goals met: 5 of 7.") {
		t.Errorf("runTable printed:\n%s", out.String())
	}
	ti := tableInput{bench: parseBench(strings.NewReader(sampleBench)), loadStart: "1.00 2.00 3.00"}
	if err := decodeRecords(strings.NewReader(sampleResults), &ti); err != nil {
		t.Fatal(err)
	}
	got := ti.render()
	for _, want := range []string{
		// Paired ratios: 2900/3000 and 1450/1500 are both 0.97.
		"| calls/s, c=1 | 2,175 | 2,100 | 2,250 | 2,100 | 0.97× go-sdk, 1.04× TS; Go defaults: 0.93× go-sdk | ≥ 0.95× go-sdk, ≥ 1× TS | yes |",
		"| p99 latency µs, c=1 | 750 | 780 | 720 | 900 | 1.04× go-sdk, 0.83× TS; Go defaults: 1.08× go-sdk | ≤ 1× TS | yes |",
		"| calls/s, c=16 | 6,000 | 5,900 | 6,100 | 5,000 | 0.98× go-sdk, 1.20× TS; Go defaults: 0.97× go-sdk | ≥ 0.95× go-sdk, > 1× TS | yes |",
		"| peak RSS MiB, 1 server connected | 12.0 | — | — | 68.0 | 0.18× TS | — | — |",
		"| peak RSS MiB, 20 servers connected | 20.0 | — | — | — | 1.67× 1 server | < 40 MiB | yes |",
		"| peak RSS MiB, `harness run`, 20 servers | 43.9 | — | — | — | 2.75× 1 server | < 40 MiB | **no** |",
		"| of which its own (RssAnon) / the binary's mapped file (RssFile) MiB, `harness run`, 20 servers | 9.0 / 34.9 | — | — | — | — | — | — |",
		"| startup ms, 20 servers in parallel | 500.0 | — | — | — | 10.00× 1 server | < 1.5× 1 server | **no** |",
		"| go test -bench ns/op, c=1 | 310,000 | — | 290,000 | — | 1.07× go-sdk | — | — |",
		"| go test -bench allocs/op, c=1 | 95 | — | 45 | — | 2.11× go-sdk | — | — |",
		"Goals met: 5 of 7.",
		"Load average (1, 5, 15 min) at start: 1.00 2.00 3.00; at end: —.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		d    int
		want string
	}{{0, 0, "0"}, {999, 0, "999"}, {1000, 0, "1,000"}, {1234567.891, 1, "1,234,567.9"}, {-1500, 0, "-1,500"}} {
		if got := num(cell{tc.v, true}, tc.d); got != tc.want {
			t.Errorf("num(%v, %d) = %q, want %q", tc.v, tc.d, got, tc.want)
		}
	}
	if got := num(cell{}, 0); got != "n/a" {
		t.Errorf("missing value = %q", got)
	}
}
