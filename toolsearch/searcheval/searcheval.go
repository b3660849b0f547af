// Package searcheval is the tool-search evaluation sets and their scores: the tasks of
// toolsearch/testdata (a query and the tools that answer it) and a ranker's Recall@1,
// Recall@5 and MRR over them. toolsearch's TestRetrieval and bench/bleveeval score their
// rankers with it, so that both measure alike.
package searcheval

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Task is one line of the tasks file: its kind, the query, and the tools that answer it
// (server/name ids, any one of them counts). A task of several steps also has each step's
// tools. A Task is a plain value.
type Task struct {
	Kind   string
	Query  string
	Expect []string
	// Steps are the tools of each step of a task that needs several tools (any one of a
	// step's tools answers that step); nil for a task of one step.
	Steps   [][]string
	HeldOut bool
}

// ReadTasks reads a tasks file whose every second task (the 2nd, 4th, …) is in the
// held-out half (the first set's layout): one task a line, three tab-separated columns
// (kind, expected ids separated by spaces, query); empty lines and lines starting with #
// are skipped. The expected ids of a task of several steps are the steps' ids with " | "
// between the steps ("fs/read_file | slack/post_message").
func ReadTasks(path string) ([]Task, error) {
	tasks, err := readTasks(path)
	for i := range tasks {
		tasks[i].HeldOut = i%2 == 1
	}
	return tasks, err
}

// ReadTasksAs reads a tasks file (the format of [ReadTasks]) whose tasks are all in one
// half: the held-out half when heldOut is set, else the tuning half. The second set keeps
// its halves in two files.
func ReadTasksAs(path string, heldOut bool) ([]Task, error) {
	tasks, err := readTasks(path)
	for i := range tasks {
		tasks[i].HeldOut = heldOut
	}
	return tasks, err
}

func readTasks(path string) ([]Task, error) {
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
		tk := Task{Kind: cols[0], Expect: strings.Fields(strings.ReplaceAll(cols[1], "|", " ")), Query: cols[2]}
		if strings.Contains(cols[1], "|") {
			for _, step := range strings.Split(cols[1], "|") {
				ids := strings.Fields(step)
				if len(ids) == 0 {
					return nil, fmt.Errorf("%s:%d: an empty step in %q", path, line, cols[1])
				}
				tk.Steps = append(tk.Steps, ids)
			}
		}
		if len(tk.Expect) == 0 {
			return nil, fmt.Errorf("%s:%d: no expected tool", path, line)
		}
		out = append(out, tk)
	}
	return out, sc.Err()
}

// Metrics are a ranker's scores over N tasks: the share of tasks answered by the first hit
// (R1) and by one of the first five (R5), and the mean reciprocal rank of the first
// answering hit among the first ten (MRR). For the tasks of several steps (MultiN of
// them), Steps10 is the mean share of a task's steps answered among the first ten hits. A
// Metrics is a plain value.
type Metrics struct {
	N           int
	R1, R5, MRR float64
	MultiN      int
	Steps10     float64
}

// String renders N, R1, R5 and MRR in columns.
func (m Metrics) String() string {
	return fmt.Sprintf("%4d  %.3f  %.3f  %.3f", m.N, m.R1, m.R5, m.MRR)
}

// Evaluate scores search over tasks. search returns its hits best first, each as a
// server/name id — or several ids separated by spaces, for one hit offered by several
// servers; a task counts at rank r when the r-th hit (r ≤ 10) is one of its expected tools.
// miss, when not nil, is called with each task not answered in the first five and what
// search returned.
func Evaluate(tasks []Task, search func(query string) []string, miss func(Task, []string)) Metrics {
	var m Metrics
	answers := func(hit string, expect []string) bool {
		for _, id := range strings.Fields(hit) {
			if slices.Contains(expect, id) {
				return true
			}
		}
		return false
	}
	for _, tk := range tasks {
		ids := search(tk.Query)
		top := ids[:min(10, len(ids))]
		rank := 0
		for i, hit := range top {
			if answers(hit, tk.Expect) {
				rank = i + 1
				break
			}
		}
		if len(tk.Steps) > 0 {
			m.MultiN++
			found := 0
			for _, step := range tk.Steps {
				if slices.ContainsFunc(top, func(hit string) bool { return answers(hit, step) }) {
					found++
				}
			}
			m.Steps10 += float64(found) / float64(len(tk.Steps))
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
	if m.MultiN > 0 {
		m.Steps10 /= float64(m.MultiN)
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
