//go:build ignore

// Command bleveeval measures bleve (github.com/blevesearch/bleve/v2), a maintained search
// library, on the tool-search evaluation set beside toolsearch's own ranker: Recall@1,
// Recall@5 and MRR (over the first 10 hits) on the dev half, the held-out half and all tasks,
// scored by package searcheval as TestRetrieval scores them, plus the wall time to build
// each index (315 tools) and of the median search.
//
// bleve is not a dependency of the harness: this file is left out of the harness module
// (build tag ignore, which go mod tidy honours too), and bench/bleveeval.sh runs it as a
// module of its own — bleve v2.6.3, and the harness through a replace to this repository:
//
//	bash bench/bleveeval.sh
//
// docs/tool-search.md ("How it was measured") records its output.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/cordisgo/harness/toolsearch"
	"github.com/cordisgo/harness/toolsearch/searcheval"
)

// splitIdents writes identifiers as words: "getFileContents" and "get_file-contents" both
// become "get File Contents"/"get file contents", so that bleve's analyzers see the words.
func splitIdents(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == '/':
			b.WriteByte(' ')
			continue
		case i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) ||
			unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])):
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// paramText is the names and descriptions of a schema's properties, nested ones included.
func paramText(schema json.RawMessage) string {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return ""
	}
	var b strings.Builder
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 6 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if props, ok := x["properties"].(map[string]any); ok {
				names := make([]string, 0, len(props))
				for k := range props {
					names = append(names, k)
				}
				slices.Sort(names)
				for _, k := range names {
					b.WriteString(k + " ")
					if p, ok := props[k].(map[string]any); ok {
						if d, ok := p["description"].(string); ok {
							b.WriteString(d + " ")
						}
					}
					walk(props[k], depth+1)
				}
			}
			for _, k := range []string{"items", "additionalProperties", "anyOf", "oneOf", "allOf"} {
				walk(x[k], depth+1)
			}
		case []any:
			for _, e := range x {
				walk(e, depth)
			}
		}
	}
	walk(v, 0)
	return b.String()
}

// firstSentence is the description up to its first ". " (or all of it).
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 10 {
		return s[:i+1]
	}
	return s
}

// fields are one tool's texts as the tuned set-up indexes them, with the boosts of
// toolsearch's fields.
var fields = []struct {
	name  string
	boost float64
}{
	{"name", 3.0}, {"title", 2.0}, {"purpose", 1.2}, {"description", 1.0}, {"params", 0.5},
	{"server", 1.6}, {"instructions", 0.15},
}

// bleveIndex indexes every tool as one document whose id is server/name: with the default
// mapping (every field through the standard analyzer, searched through _all), or tuned: a
// field per part with the English analyzer (stop words, Porter stemming), identifiers split,
// and a CJK-bigram field over the same text.
func bleveIndex(servers []toolsearch.Server, tuned bool) (bleve.Index, error) {
	var im *mapping.IndexMappingImpl
	if tuned {
		im = bleve.NewIndexMapping()
		dm := bleve.NewDocumentMapping()
		for _, f := range fields {
			fm := bleve.NewTextFieldMapping()
			fm.Analyzer = en.AnalyzerName
			fm.Store, fm.IncludeInAll = false, false
			dm.AddFieldMappingsAt(f.name, fm)
		}
		cm := bleve.NewTextFieldMapping()
		cm.Analyzer = cjk.AnalyzerName
		cm.Store, cm.IncludeInAll = false, false
		dm.AddFieldMappingsAt("cjk", cm)
		im.DefaultMapping = dm
	} else {
		im = bleve.NewIndexMapping()
	}
	ix, err := bleve.NewMemOnly(im)
	if err != nil {
		return nil, err
	}
	batch := ix.NewBatch()
	for _, s := range servers {
		for _, t := range s.Tools {
			params := paramText(t.InputSchema)
			var doc map[string]any
			if tuned {
				doc = map[string]any{
					"name": splitIdents(t.Name), "title": t.Title, "purpose": firstSentence(t.Description),
					"description": t.Description, "params": splitIdents(params), "server": splitIdents(s.Name),
					"instructions": s.Instructions,
					"cjk":          strings.Join([]string{t.Title, t.Description, params}, " "),
				}
			} else {
				doc = map[string]any{"server": s.Name, "name": t.Name, "title": t.Title, "description": t.Description, "params": params}
			}
			if err := batch.Index(s.Name+"/"+t.Name, doc); err != nil {
				return nil, err
			}
		}
	}
	return ix, ix.Batch(batch)
}

// bleveSearch returns the first 10 ids for q: a match query on _all (default), or a
// disjunction of match queries with fuzziness 1 over the tuned fields, boosted as toolsearch
// weighs them, and the CJK field.
func bleveSearch(ix bleve.Index, q string, tuned bool) []string {
	var bq query.Query
	if tuned {
		text := splitIdents(q)
		var qs []query.Query
		for _, f := range fields {
			m := bleve.NewMatchQuery(text)
			m.SetField(f.name)
			m.SetBoost(f.boost)
			m.SetFuzziness(1)
			qs = append(qs, m)
		}
		c := bleve.NewMatchQuery(q)
		c.SetField("cjk")
		qs = append(qs, c)
		bq = bleve.NewDisjunctionQuery(qs...)
	} else {
		bq = bleve.NewMatchQuery(q)
	}
	res, err := ix.Search(bleve.NewSearchRequestOptions(bq, 10, 0, false))
	if err != nil {
		log.Fatalf("bleve search %q: %v", q, err)
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	return ids
}

func main() {
	catalog := flag.String("catalog", "toolsearch/testdata/catalog.json", "the evaluation catalog")
	tasksPath := flag.String("tasks", "toolsearch/testdata/tasks.tsv", "the evaluation tasks")
	flag.Parse()
	log.SetFlags(0)
	servers, err := toolsearch.ReadCatalog(*catalog)
	if err != nil {
		log.Fatal(err)
	}
	tasks, err := searcheval.ReadTasks(*tasksPath)
	if err != nil {
		log.Fatal(err)
	}
	tools := 0
	for _, s := range servers {
		tools += len(s.Tools)
	}
	fmt.Printf("%d tools from %d servers, %d tasks\n", tools, len(servers), len(tasks))
	fmt.Printf("%-40s %-9s %4s  %-5s  %-5s  %-5s  %9s  %12s\n", "ranker", "tasks", "n", "R@1", "R@5", "MRR", "build", "search p50")

	type ranker struct {
		name   string
		build  time.Duration
		search func(string) []string
	}
	start := time.Now()
	own := toolsearch.New(servers)
	rankers := []ranker{{"toolsearch", time.Since(start), func(q string) []string {
		var ids []string
		for _, h := range own.Search(q, toolsearch.SearchOptions{Limit: 10}) {
			ids = append(ids, h.Server+"/"+h.Name)
		}
		return ids
	}}}
	for _, tuned := range []bool{false, true} {
		name := "bleve, default mapping"
		if tuned {
			name = "bleve, fields + English + CJK + fuzziness"
		}
		start := time.Now()
		ix, err := bleveIndex(servers, tuned)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		rankers = append(rankers, ranker{name, time.Since(start), func(q string) []string { return bleveSearch(ix, q, tuned) }})
	}
	for _, r := range rankers {
		for _, part := range []string{"dev", "held-out", "all"} {
			var times []time.Duration
			timed := func(q string) []string {
				start := time.Now()
				ids := r.search(q)
				times = append(times, time.Since(start))
				return ids
			}
			sub := tasks
			if part != "all" {
				sub = searcheval.Split(tasks, part == "held-out")
			}
			m := searcheval.Evaluate(sub, timed, nil)
			slices.Sort(times)
			fmt.Printf("%-40s %-9s %4d  %.3f  %.3f  %.3f  %7.1fms  %10.2fms\n", r.name, part, m.N, m.R1, m.R5, m.MRR,
				float64(r.build.Microseconds())/1000, float64(times[len(times)/2].Microseconds())/1000)
		}
	}
}
