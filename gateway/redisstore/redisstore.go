// Package redisstore keeps the state that the replicas of one gateway share in Redis: the
// downstream sessions' records ([gateway.Store]), so that a session can move to another
// replica when its own dies or restarts, and the audit trail ([audit.Log]), a Redis stream.
//
// The client is github.com/redis/go-redis/v9, the client Redis maintains: the store's
// operations are single commands (SET with an expiry, GET, EXPIRE, DEL) made when a
// session begins, changes or is used after a quarter of its idle timeout, never on every
// call, so a plain command API serves it (rueidis' automatic pipelining and client-side
// caching buy nothing here; docs/gateway.md).
//
// Keys are "<prefix>session:<Mcp-Session-Id>" holding the record as JSON, and the stream
// "<prefix>audit"; gateways that share one Redis with different prefixes
// ([Options.Prefix]) do not see each other.
//
// A Store is safe for concurrent use.
package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/gateway/audit"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "harness:gateway:"

// Options configures [Open].
type Options struct {
	// URL is the Redis server: redis://[user:password@]host:port[/db], rediss:// for TLS,
	// or unix:///path/to/socket.
	URL string
	// Prefix starts every key (default DefaultPrefix).
	Prefix string
}

// Store is a [gateway.Store] in Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
	shown  string // the URL without its password, for errors
}

var (
	_ gateway.Store = (*Store)(nil)
	_ gateway.Vault = (*Store)(nil)
	_ audit.Log     = (*Store)(nil)
)

// Open connects to the Redis server at opts.URL and checks that it answers (PING, within
// cx). The error names the URL (without a password) and what went wrong.
func Open(cx context.Context, opts Options) (*Store, error) {
	shown := hidePassword(opts.URL)
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("redisstore: %s: %w (want redis://host:port/db, rediss://… or unix:///path)", shown, err)
	}
	rdb := redis.NewClient(ro)
	if err := rdb.Ping(cx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("redisstore: %s does not answer: %w", shown, err)
	}
	prefix := opts.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Store{rdb: rdb, prefix: prefix, shown: shown}, nil
}

// Close closes the connections.
func (s *Store) Close() error { return s.rdb.Close() }

func (s *Store) sessionKey(id string) string { return s.prefix + "session:" + id }

// PutSession implements [gateway.Store].
func (s *Store) PutSession(cx context.Context, rec gateway.SessionRecord, ttl time.Duration) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return s.wrap(s.rdb.Set(cx, s.sessionKey(rec.ID), b, max(ttl, 0)).Err())
}

// TouchSession implements [gateway.Store].
func (s *Store) TouchSession(cx context.Context, id string, ttl time.Duration) error {
	if ttl <= 0 {
		return nil
	}
	return s.wrap(s.rdb.Expire(cx, s.sessionKey(id), ttl).Err())
}

// Session implements [gateway.Store].
func (s *Store) Session(cx context.Context, id string) (gateway.SessionRecord, error) {
	b, err := s.rdb.Get(cx, s.sessionKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return gateway.SessionRecord{}, gateway.ErrNoSession
	}
	if err != nil {
		return gateway.SessionRecord{}, s.wrap(err)
	}
	var rec gateway.SessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return gateway.SessionRecord{}, fmt.Errorf("redisstore: the record of a session in %s is not one this gateway wrote: %w", s.shown, err)
	}
	return rec, nil
}

// DeleteSession implements [gateway.Store].
func (s *Store) DeleteSession(cx context.Context, id string) error {
	return s.wrap(s.rdb.Del(cx, s.sessionKey(id)).Err())
}

func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redisstore: %s: %w", s.shown, err)
}

// hidePassword returns raw with the password of its user information masked.
func hidePassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// auditKey is the stream of the audit trail.
func (s *Store) auditKey() string { return s.prefix + "audit" }

// Append implements [audit.Log]: one XADD per entry, in one pipeline, to the stream
// "<prefix>audit". The trail is as durable as the server makes it: run Redis with
// appendonly yes (appendfsync everysec loses at most a second of entries to a crash of
// Redis; always, none).
func (s *Store) Append(cx context.Context, entries []audit.Entry) error {
	pipe := s.rdb.Pipeline()
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		pipe.XAdd(cx, &redis.XAddArgs{Stream: s.auditKey(), Values: []any{"e", b}})
	}
	_, err := pipe.Exec(cx)
	return s.wrap(err)
}

// auditPage is how many stream entries a Query reads at a time, newest first.
const auditPage = 500

// Query implements [audit.Log]: it reads the stream from its newest entry back until it has
// q's limit of selected entries, or reaches q.Since or the stream's start.
func (s *Store) Query(cx context.Context, q audit.Query) ([]audit.Entry, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = audit.DefaultLimit
	}
	var out []audit.Entry // newest first
	end := "+"
	for len(out) < limit {
		msgs, err := s.rdb.XRevRangeN(cx, s.auditKey(), end, "-", auditPage).Result()
		if err != nil {
			return nil, s.wrap(err)
		}
		for _, m := range msgs {
			raw, _ := m.Values["e"].(string)
			var e audit.Entry
			if json.Unmarshal([]byte(raw), &e) != nil {
				continue
			}
			if !q.Since.IsZero() && e.Time.Before(q.Since) {
				return reversed(out), nil
			}
			if q.Match(e) {
				out = append(out, e)
				if len(out) == limit {
					break
				}
			}
		}
		if len(msgs) < auditPage {
			break
		}
		end = "(" + msgs[len(msgs)-1].ID
	}
	return reversed(out), nil
}

func reversed(es []audit.Entry) []audit.Entry {
	slices.Reverse(es)
	return es
}

func (s *Store) vaultKey(name string) string { return s.prefix + "vault:" + name }

// Sealed implements [gateway.Vault].
func (s *Store) Sealed(cx context.Context, name string) ([]byte, error) {
	b, err := s.rdb.Get(cx, s.vaultKey(name)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, s.wrap(err)
}

// vaultLockTTL bounds how long a replica holds the lock of one vault value (a token refresh
// runs under it): a replica that dies holding it delays the others by at most this.
const vaultLockTTL = 30 * time.Second

// unlock deletes a lock only if it is still the caller's.
var unlock = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`)

// UpdateSealed implements [gateway.Vault] under a lock of name shared by the replicas (SET NX
// with an expiry, released only by its holder): fn may do what must happen once, such as
// refreshing a token whose refresh token the server rotates, and no other replica runs an
// update of name meanwhile.
func (s *Store) UpdateSealed(cx context.Context, name string, fn func([]byte) ([]byte, error)) error {
	key := s.vaultKey(name)
	lock := key + ":lock"
	var b [16]byte
	_, _ = rand.Read(b[:])
	holder := hex.EncodeToString(b[:])
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		ok, err := s.rdb.SetNX(cx, lock, holder, vaultLockTTL).Result()
		if err != nil {
			return s.wrap(err)
		}
		if ok {
			break
		}
		select {
		case <-cx.Done():
			return fmt.Errorf("redisstore: waiting for the lock of a credential: %w", cx.Err())
		case <-time.After(wait):
		}
	}
	defer func() { _ = unlock.Run(context.WithoutCancel(cx), s.rdb, []string{lock}, holder).Err() }()
	old, err := s.rdb.Get(cx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		old, err = nil, nil
	}
	if err != nil {
		return s.wrap(err)
	}
	next, err := fn(old)
	if err != nil {
		return err
	}
	if next == nil {
		return s.wrap(s.rdb.Del(cx, key).Err())
	}
	return s.wrap(s.rdb.Set(cx, key, next, 0).Err())
}
