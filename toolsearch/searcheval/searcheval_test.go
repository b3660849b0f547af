package searcheval_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cordisgo/harness/toolsearch/searcheval"
)

// The tasks file's columns and halves, and the scores of a ranker that answers the first
// task first, the second third and the third not at all.
func TestReadAndEvaluate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.tsv")
	doc := "# kind\texpect\tquery\npara\tfs/read fs/cat\tshow a file\n\ntypo\tgh/issue\tcreate an isue\nzh\tweb/fetch\t抓取网页\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	tasks, err := searcheval.ReadTasks(path)
	if err != nil || len(tasks) != 3 || tasks[0].Kind != "para" || len(tasks[0].Expect) != 2 || tasks[1].Query != "create an isue" ||
		tasks[0].HeldOut || !tasks[1].HeldOut || tasks[2].HeldOut {
		t.Fatalf("tasks %+v, %v", tasks, err)
	}
	if got := searcheval.Split(tasks, true); len(got) != 1 || got[0].Kind != "typo" {
		t.Fatalf("held-out half %+v", got)
	}
	answers := map[string][]string{
		"show a file":    {"fs/cat", "fs/read"},
		"create an isue": {"gh/pr", "gh/list", "gh/issue"},
		"抓取网页":           {"web/search"},
	}
	var missed []string
	m := searcheval.Evaluate(tasks, func(q string) []string { return answers[q] }, func(tk searcheval.Task, _ []string) {
		missed = append(missed, tk.Kind)
	})
	if m.N != 3 || m.R1 != 1.0/3 || m.R5 != 2.0/3 || m.MRR != (1+1.0/3)/3 || len(missed) != 1 || missed[0] != "zh" {
		t.Fatalf("metrics %+v (%s), missed %v", m, m, missed)
	}
	if _, err := searcheval.ReadTasks(filepath.Join(t.TempDir(), "none.tsv")); err == nil {
		t.Fatal("a missing file read")
	}
	// a task of two steps, answered for one step; a hit offered by two servers
	doc = "multi\tfs/read fs/cat | chat/post\tread notes.txt and post it to #general\ndup\tfs2/read\tread a file\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	tasks, err = searcheval.ReadTasksAs(path, true)
	if err != nil || len(tasks) != 2 || !tasks[0].HeldOut || !tasks[1].HeldOut || len(tasks[0].Steps) != 2 ||
		len(tasks[0].Expect) != 3 || tasks[1].Steps != nil {
		t.Fatalf("tasks %+v, %v", tasks, err)
	}
	m = searcheval.Evaluate(tasks, func(q string) []string {
		if q == "read a file" {
			return []string{"fs/read fs2/read"}
		}
		return []string{"web/get", "fs/cat"}
	}, nil)
	if m.N != 2 || m.R1 != 0.5 || m.R5 != 1 || m.MultiN != 1 || m.Steps10 != 0.5 {
		t.Fatalf("metrics %+v", m)
	}
	if err := os.WriteFile(path, []byte("multi\ta | \tq\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := searcheval.ReadTasks(path); err == nil {
		t.Fatal("an empty step accepted")
	}
	if err := os.WriteFile(path, []byte("para\tonly two columns\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := searcheval.ReadTasks(path); err == nil {
		t.Fatal("a line of two columns accepted")
	}
}
