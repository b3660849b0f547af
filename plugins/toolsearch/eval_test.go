package toolsearch

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// task is one retrieval task of testdata/tasks.tsv.
type task struct {
	kind    string
	query   string
	expect  []string // server/name
	heldOut bool
}

func loadTasks(t testing.TB) []task {
	t.Helper()
	f, err := os.Open("testdata/tasks.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []task
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		cols := strings.Split(s, "\t")
		if len(cols) != 3 {
			t.Fatalf("testdata/tasks.tsv:%d: want 3 tab-separated columns, got %d", line, len(cols))
		}
		out = append(out, task{kind: cols[0], expect: strings.Fields(cols[1]), query: cols[2], heldOut: len(out)%2 == 1})
	}
	return out
}

func loadCatalog(t testing.TB) []Server {
	t.Helper()
	servers, err := ReadCatalog("testdata/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	return servers
}

// metrics are the retrieval scores of one ranker over a set of tasks.
type metrics struct {
	n           int
	r1, r5, mrr float64
}

func (m metrics) String() string {
	return fmt.Sprintf("%4d  %.3f  %.3f  %.3f", m.n, m.r1, m.r5, m.mrr)
}

// evaluate scores search over tasks: a task counts at rank r when the r-th hit is one of
// its expected tools (MRR over the first 10 hits).
func evaluate(tasks []task, search func(q string) []Hit, failures func(task, []Hit)) metrics {
	var m metrics
	for _, tk := range tasks {
		hits := search(tk.query)
		rank := 0
		for i, h := range hits {
			if slices.Contains(tk.expect, h.Server+"/"+h.Name) {
				rank = i + 1
				break
			}
		}
		m.n++
		if rank == 1 {
			m.r1++
		}
		if rank >= 1 && rank <= 5 {
			m.r5++
		}
		if rank > 0 {
			m.mrr += 1 / float64(rank)
		}
		if (rank == 0 || rank > 5) && failures != nil {
			failures(tk, hits)
		}
	}
	if m.n > 0 {
		m.r1 /= float64(m.n)
		m.r5 /= float64(m.n)
		m.mrr /= float64(m.n)
	}
	return m
}

// bm25 is the baseline: plain Okapi BM25 (k1 1.2, b 0.75) over one text per tool (server,
// name, title, description, parameter names and descriptions), lowercased and cut at
// anything that is not a letter or digit; no stemming, stop words, synonyms or n-grams.
type bm25 struct {
	docs []doc
	tf   []map[string]int
	len  []int
	avg  float64
	df   map[string]int
}

func newBM25(servers []Server) *bm25 {
	b := &bm25{df: map[string]int{}}
	total := 0
	for _, s := range servers {
		for _, t := range s.Tools {
			toks := plainTokens(strings.Join([]string{s.Name, t.Name, t.Title, t.Description, paramText(t.InputSchema)}, " "))
			tf := map[string]int{}
			for _, w := range toks {
				if tf[w] == 0 {
					b.df[w]++
				}
				tf[w]++
			}
			b.docs = append(b.docs, doc{server: s.Name, tool: t})
			b.tf = append(b.tf, tf)
			b.len = append(b.len, len(toks))
			total += len(toks)
		}
	}
	b.avg = float64(total) / float64(max(1, len(b.docs)))
	return b
}

func plainTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func (b *bm25) search(q string, limit int) []Hit {
	type sc struct {
		d int
		s float64
	}
	n := float64(len(b.docs))
	var out []sc
	qs := plainTokens(q)
	for d, tf := range b.tf {
		var s float64
		for _, w := range qs {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			df := float64(b.df[w])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * 2.2 / (f + 1.2*(0.25+0.75*float64(b.len[d])/b.avg))
		}
		if s > 0 {
			out = append(out, sc{d, s})
		}
	}
	slices.SortFunc(out, func(x, y sc) int {
		if c := cmp.Compare(y.s, x.s); c != 0 {
			return c
		}
		return cmp.Compare(x.d, y.d)
	})
	hits := make([]Hit, 0, limit)
	for i := 0; i < len(out) && i < limit; i++ {
		d := b.docs[out[i].d]
		hits = append(hits, Hit{Server: d.server, Name: d.tool.Name, Score: out[i].s})
	}
	return hits
}

// TestRetrieval measures Recall@1, Recall@5 and MRR of the index and of the BM25 baseline
// on the evaluation set, on the dev half, the held-out half and both, and per kind of
// task; it fails when the index falls below the targets. TOOLSEARCH_FAILURES=1
// prints the dev half's misses.
func TestRetrieval(t *testing.T) {
	servers := loadCatalog(t)
	tasks := loadTasks(t)
	tools := 0
	for _, s := range servers {
		tools += len(s.Tools)
	}
	if tools < 300 || len(tasks) < 200 {
		t.Fatalf("evaluation set too small: %d tools, %d tasks", tools, len(tasks))
	}
	ix := New(servers)
	base := newBM25(servers)
	rankers := []struct {
		name   string
		search func(string) []Hit
	}{
		{"toolsearch", func(q string) []Hit { return ix.Search(q, SearchOptions{Limit: 10}) }},
		{"bm25", func(q string) []Hit { return base.search(q, 10) }},
	}
	split := func(held bool) []task {
		var out []task
		for _, tk := range tasks {
			if tk.heldOut == held {
				out = append(out, tk)
			}
		}
		return out
	}
	var fail func(task, []Hit)
	if os.Getenv("TOOLSEARCH_FAILURES") != "" {
		fail = func(tk task, hits []Hit) {
			if tk.heldOut {
				return
			}
			var got []string
			for _, h := range hits[:min(5, len(hits))] {
				got = append(got, h.Server+"/"+h.Name)
			}
			t.Logf("miss [%s] %q want %v got %v", tk.kind, tk.query, tk.expect, got)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools from %d servers, %d tasks\n", tools, len(servers), len(tasks))
	fmt.Fprintf(&b, "%-11s %-9s %4s  %-5s  %-5s  %-5s\n", "ranker", "tasks", "n", "R@1", "R@5", "MRR")
	results := map[string]metrics{}
	for _, r := range rankers {
		for _, part := range []struct {
			name  string
			tasks []task
		}{{"dev", split(false)}, {"held-out", split(true)}, {"all", tasks}} {
			f := fail
			if r.name != "toolsearch" || part.name != "dev" {
				f = nil
			}
			m := evaluate(part.tasks, r.search, f)
			results[r.name+"/"+part.name] = m
			fmt.Fprintf(&b, "%-11s %-9s %s\n", r.name, part.name, m)
		}
	}
	kinds := []string{}
	for _, tk := range tasks {
		if !slices.Contains(kinds, tk.kind) {
			kinds = append(kinds, tk.kind)
		}
	}
	fmt.Fprintf(&b, "by kind (all tasks): R@5 toolsearch / bm25\n")
	for _, k := range kinds {
		var sub []task
		for _, tk := range tasks {
			if tk.kind == k {
				sub = append(sub, tk)
			}
		}
		a, c := evaluate(sub, rankers[0].search, nil), evaluate(sub, rankers[1].search, nil)
		fmt.Fprintf(&b, "  %-7s %3d  %.3f / %.3f   MRR %.3f / %.3f\n", k, len(sub), a.r5, c.r5, a.mrr, c.mrr)
	}
	t.Log("\n" + b.String())
	for _, part := range []string{"dev", "held-out"} {
		m := results["toolsearch/"+part]
		if m.r5 < 0.75 || m.mrr < 0.65 {
			t.Errorf("%s half: Recall@5 %.3f, MRR %.3f; want at least 0.75 and 0.65", part, m.r5, m.mrr)
		}
	}
}
