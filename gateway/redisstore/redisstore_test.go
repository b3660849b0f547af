package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/gateway/audit"
	"github.com/cordisgo/harness/gateway/redisstore"
	"github.com/cordisgo/harness/testkit/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T, url, prefix string) *redisstore.Store {
	t.Helper()
	s, err := redisstore.Open(t.Context(), redisstore.Options{URL: url, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Records round-trip, expire, and stay apart under different prefixes.
func TestSessions(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL, "")
	other := open(t, srv.URL, "other:")
	cx := t.Context()
	rec := gateway.SessionRecord{ID: "s1", Route: gateway.PathAggregated, Replica: "a", User: "alice",
		State:         mcp.ServerSessionState{NegotiatedProtocolVersion: "2025-11-25", LogLevel: "info", InitializeParams: &mcp.InitializeParams{ClientInfo: &mcp.Implementation{Name: "c", Version: "1"}}},
		Subscriptions: []string{"demo://readme"}, Started: time.Now().UTC().Truncate(time.Second)}
	if err := s.PutSession(cx, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := s.Session(cx, "s1")
	if err != nil || got.User != "alice" || got.State.LogLevel != "info" || got.State.InitializeParams.ClientInfo.Name != "c" || !got.Started.Equal(rec.Started) || got.Subscriptions[0] != "demo://readme" {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if _, err := other.Session(cx, "s1"); !errors.Is(err, gateway.ErrNoSession) {
		t.Fatalf("another prefix sees the record: %v", err)
	}
	// The record's expiry is what Put and Touch set (Redis expires it then).
	ro, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(ro)
	defer func() { _ = rdb.Close() }()
	key := redisstore.DefaultPrefix + "session:s1"
	if ttl := rdb.PTTL(cx, key).Val(); ttl <= 50*time.Second || ttl > time.Minute {
		t.Fatalf("expiry after Put: %v", ttl)
	}
	if err := s.TouchSession(cx, "s1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(cx, key).Val(); ttl <= 59*time.Minute {
		t.Fatalf("expiry after Touch: %v", ttl)
	}
	if err := s.PutSession(cx, rec, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(cx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(cx, "s1"); !errors.Is(err, gateway.ErrNoSession) {
		t.Fatalf("after delete: %v", err)
	}
}

// A server that does not answer, or a malformed URL, is refused with the URL named and its
// password hidden.
func TestOpenErrors(t *testing.T) {
	cx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := redisstore.Open(cx, redisstore.Options{URL: "redis://user:hunter2@127.0.0.1:1/0"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("unreachable server: %v", err)
	}
	_, err = redisstore.Open(cx, redisstore.Options{URL: "http://example.com"})
	if err == nil || !strings.Contains(err.Error(), "redis://host:port/db") {
		t.Fatalf("bad URL: %v", err)
	}
}

// The audit trail is a stream: appended in order, read back newest-limited and filtered,
// oldest first.
func TestAudit(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	s := open(t, srv.URL, "")
	start := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	var batch []audit.Entry
	for i := range 1200 {
		who := "alice"
		if i%3 == 0 {
			who = "bob"
		}
		batch = append(batch, audit.Entry{Time: start.Add(time.Duration(i) * time.Second), Person: who, Server: "demo", Tool: "echo", Outcome: audit.OK})
	}
	if err := s.Append(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query(t.Context(), audit.Query{Person: "bob", Limit: 3})
	if err != nil || len(got) != 3 || !got[2].Time.Equal(start.Add(1197*time.Second)) || !got[0].Time.Equal(start.Add(1191*time.Second)) {
		t.Fatalf("bob's newest three: %+v, %v", got, err)
	}
	got, _ = s.Query(t.Context(), audit.Query{Since: start.Add(1190 * time.Second), Limit: 1000})
	if len(got) != 10 {
		t.Fatalf("since: %d entries", len(got))
	}
	// Another replica, or a restarted one, reads the same trail; a Redis restarted on its
	// append-only file still has it.
	srv.Stop()
	srv2 := redistest.Start(t, redistest.Options{AppendOnly: true, Dir: srv.Dir})
	got, err = open(t, srv2.URL, "").Query(t.Context(), audit.Query{Limit: 2000})
	if err != nil || len(got) != 1200 {
		t.Fatalf("after a restart of Redis: %d entries, %v", len(got), err)
	}
}
