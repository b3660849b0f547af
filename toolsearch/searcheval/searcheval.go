// Package searcheval is the tool-search evaluation set and its scores: the tasks of
// toolsearch/testdata/tasks.tsv (a query and the tools that answer it) and a
// ranker's Recall@1, Recall@5 and MRR over them. toolsearch's TestRetrieval and
// bench/bleveeval score their rankers with it, so that both measure alike.
package searcheval

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Task is one line of the tasks file: its kind, the query, and the tools that answer it
// (server/name ids, any one of them counts). Every second task (the 2nd, 4th, …) is in
// the held-out half. A Task is a plain value.
type Task struct {
	Kind    string
	Query   string
	Expect  []string
	HeldOut bool
}

// ReadTasks reads a tasks file: one task a line, three tab-separated columns (kind,
// expected ids separated by spaces, query); empty lines and lines starting with # are
// skipped.
func ReadTasks(path string) ([]Task, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []Task
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		cols := strings.Split(s, "\t")
		if len(cols) != 3 {
			return nil, fmt.Errorf("%s:%d: want 3 tab-separated columns, got %d", path, line, len(cols))
		}
		out = append(out, Task{Kind: cols[0], Expect: strings.Fields(cols[1]), Query: cols[2], HeldOut: len(out)%2 == 1})
	}
	return out, sc.Err()
}

// Metrics are a ranker's scores over N tasks: the share of tasks answered by the first hit
// (R1) and by one of the first five (R5), and the mean reciprocal rank of the first
// answering hit among the first ten (MRR). A Metrics is a plain value.
type Metrics struct {
	N           int
	R1, R5, MRR float64
}

// String renders N, R1, R5 and MRR in columns.
func (m Metrics) String() string {
	return fmt.Sprintf("%4d  %.3f  %.3f  %.3f", m.N, m.R1, m.R5, m.MRR)
}

// Evaluate scores search over tasks. search returns server/name ids, best first; a task
// counts at rank r when the r-th id (r ≤ 10) is one of its expected tools. miss, when not
// nil, is called with each task not answered in the first five and what search returned.
func Evaluate(tasks []Task, search func(query string) []string, miss func(Task, []string)) Metrics {
	var m Metrics
	for _, tk := range tasks {
		ids := search(tk.Query)
		rank := 0
		for i, id := range ids[:min(10, len(ids))] {
			if slices.Contains(tk.Expect, id) {
				rank = i + 1
				break
			}
		}
		m.N++
		if rank == 1 {
			m.R1++
		}
		if rank >= 1 && rank <= 5 {
			m.R5++
		}
		if rank > 0 {
			m.MRR += 1 / float64(rank)
		}
		if (rank == 0 || rank > 5) && miss != nil {
			miss(tk, ids)
		}
	}
	if m.N > 0 {
		m.R1 /= float64(m.N)
		m.R5 /= float64(m.N)
		m.MRR /= float64(m.N)
	}
	return m
}

// Split returns the tasks of the held-out half (heldOut) or of the dev half.
func Split(tasks []Task, heldOut bool) []Task {
	var out []Task
	for _, tk := range tasks {
		if tk.HeldOut == heldOut {
			out = append(out, tk)
		}
	}
	return out
}
