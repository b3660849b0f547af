package toolsearch_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/testkit/regtest"
	"github.com/cordisgo/harness/toolsearch"
	"github.com/cordisgo/harness/toolsearch/searcheval"
)

// largeFleet is the evaluation catalog four times over (each copy's servers renamed
// "name", "name-2", …): 1,260 real tools, every one with three near-duplicates.
func largeFleet(tb testing.TB) []toolsearch.Server {
	tb.Helper()
	servers, err := toolsearch.ReadCatalog("testdata/catalog.json")
	if err != nil {
		tb.Fatal(err)
	}
	return regtest.Grow(servers, 4*regtest.ToolCount(servers))
}

// queries are the evaluation tasks' queries.
func queries(tb testing.TB) []string {
	tb.Helper()
	tasks, err := searcheval.ReadTasks("testdata/tasks.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]string, len(tasks))
	for i, tk := range tasks {
		out[i] = tk.Query
	}
	return out
}

// BenchmarkBuild indexes 1,260 tools.
func BenchmarkBuild(b *testing.B) {
	servers := largeFleet(b)
	b.ReportMetric(float64(regtest.ToolCount(servers)), "tools")
	b.ReportAllocs()
	for b.Loop() {
		toolsearch.New(servers)
	}
}

// BenchmarkSearch runs the evaluation's queries over 1,260 tools, one query per op, and
// reports the 50th and 99th percentile of one search in wall time and (on Linux) in the
// thread's CPU time, which a loaded machine does not inflate.
func BenchmarkSearch(b *testing.B) {
	servers := largeFleet(b)
	ix := toolsearch.New(servers)
	qs := queries(b)
	var wall, cpu []time.Duration
	i := 0
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	for b.Loop() {
		start, startCPU := time.Now(), threadCPU()
		ix.Search(qs[i%len(qs)], toolsearch.SearchOptions{Limit: 5, Schemas: 3})
		cpu = append(cpu, threadCPU()-startCPU)
		wall = append(wall, time.Since(start))
		i++
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	b.ReportMetric(float64(wall[len(wall)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(wall[len(wall)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(cpu[len(cpu)*99/100].Microseconds()), "p99-cpu-µs")
}

// BenchmarkBuildCPU indexes 1,260 tools; cpu-ms/op is the thread's CPU time (Linux),
// which leaves out the garbage collector's work on other threads.
func BenchmarkBuildCPU(b *testing.B) {
	servers := largeFleet(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu time.Duration
	for b.Loop() {
		start := threadCPU()
		toolsearch.New(servers)
		cpu += threadCPU() - start
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// scaledFleet is the second evaluation set's catalog (1,933 real tools of 76 servers)
// copied until it has at least n tools (each copy's servers renamed "name-2", …), cut to n.
func scaledFleet(tb testing.TB, n int) []toolsearch.Server {
	tb.Helper()
	servers, err := toolsearch.ReadCatalog("testdata/second/catalog.json")
	if err != nil {
		tb.Fatal(err)
	}
	return regtest.Grow(servers, n)
}

// BenchmarkScale builds the index of 1,000 to 10,000 real tools and searches it with the
// second set's tasks: build time (the thread's CPU) and the heap the index keeps, per tool,
// and a search's 99th percentile in CPU time, at each size — what must stay linear (build,
// memory) or flat enough (search) as a fleet grows.
func BenchmarkScale(b *testing.B) {
	var qs []string
	for _, f := range []string{"testdata/second/tune.tsv", "testdata/second/heldout.tsv"} {
		data, err := readFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(data, "\n") {
			if cols := strings.Split(line, "\t"); len(cols) == 3 && !strings.HasPrefix(line, "#") {
				qs = append(qs, cols[2])
			}
		}
	}
	for _, n := range []int{1000, 2500, 5000, 10000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			servers := scaledFleet(b, n)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var buildCPU time.Duration
			var heap uint64
			var ix *toolsearch.Index
			var cpu []time.Duration
			i := 0
			for b.Loop() {
				if ix == nil || i%len(qs) == 0 {
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					start := threadCPU()
					ix = toolsearch.New(servers)
					buildCPU = threadCPU() - start
					runtime.GC()
					runtime.ReadMemStats(&after)
					heap = after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
				}
				start := threadCPU()
				ix.Search(qs[i%len(qs)], toolsearch.SearchOptions{Limit: 5, Schemas: 3})
				cpu = append(cpu, threadCPU()-start)
				i++
			}
			runtime.KeepAlive(ix)
			slices.Sort(cpu)
			b.ReportMetric(float64(buildCPU.Microseconds())/1000, "build-cpu-ms")
			b.ReportMetric(float64(buildCPU.Nanoseconds())/float64(n)/1000, "build-µs/tool")
			b.ReportMetric(float64(heap)/float64(n), "heap-B/tool")
			b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds()), "search-p50-cpu-µs")
			b.ReportMetric(float64(cpu[len(cpu)*99/100].Microseconds()), "search-p99-cpu-µs")
		})
	}
}
