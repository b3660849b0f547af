package audit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/gateway/audit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The file keeps what a Writer was given, in order, through its close; a query selects by
// person, outcome and time, keeps the newest up to its limit, and skips a torn line.
func TestFileAndWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := audit.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(f, func(err error) { t.Error(err) })
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i := range 10 {
		who, outcome := "alice", audit.OK
		if i%2 == 1 {
			who, outcome = "bob", "denied"
		}
		w.Add(audit.Entry{Time: start.Add(time.Duration(i) * time.Minute), Person: who, Server: "demo", Tool: "add", Outcome: outcome, Args: []byte(`{"a":1}`)})
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// A crash cut a write short: the torn line is skipped.
	torn, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = torn.WriteString(`{"time":"2026-12-04T11:00:00Z","person":"ev`)
	_ = torn.Close()

	all, err := audit.ReadFile(path, audit.Query{})
	if err != nil || len(all) != 10 || all[0].Person != "alice" || all[9].Person != "bob" {
		t.Fatalf("all: %d entries, %v", len(all), err)
	}
	denied, _ := audit.ReadFile(path, audit.Query{Outcome: "denied", Limit: 2})
	if len(denied) != 2 || !denied[1].Time.Equal(start.Add(9*time.Minute)) || denied[0].Person != "bob" {
		t.Fatalf("the newest two denied: %+v", denied)
	}
	since, _ := audit.ReadFile(path, audit.Query{Person: "alice", Since: start.Add(5 * time.Minute)})
	if len(since) != 2 {
		t.Fatalf("alice since 10:05: %+v", since)
	}
	var b strings.Builder
	if err := audit.Print(&b, denied); err != nil || !strings.Contains(b.String(), "demo/add") || !strings.Contains(b.String(), "denied") {
		t.Fatalf("print: %q %v", b.String(), err)
	}
}

// failing fails its first appends, then keeps what it is given.
type failing struct {
	mu    sync.Mutex
	fails int
	got   []audit.Entry
}

func (f *failing) Append(_ context.Context, es []audit.Entry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fails > 0 {
		f.fails--
		return errors.New("down")
	}
	f.got = append(f.got, es...)
	return nil
}

func (f *failing) Query(context.Context, audit.Query) ([]audit.Entry, error) { return nil, nil }

// A log that fails keeps its entries pending: they are appended once it works again.
func TestWriterRetries(t *testing.T) {
	log := &failing{fails: 1}
	var errs []error
	var mu sync.Mutex
	w := audit.NewWriter(log, func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() })
	w.Add(audit.Entry{Tool: "one"})
	w.Add(audit.Entry{Tool: "two"})
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 1 || len(log.got) != 2 || log.got[0].Tool != "one" {
		t.Fatalf("errors %v, appended %+v", errs, log.got)
	}
}
