package mcpauth_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cordisgo/harness/mcpauth"
)

// A FileStore keeps one record per server URL and client; records print without their
// secrets.
func ExampleFileStore() {
	dir, _ := os.MkdirTemp("", "mcpauth-example")
	defer func() { _ = os.RemoveAll(dir) }()
	store := mcpauth.NewFileStore(filepath.Join(dir, "credentials.json"))
	cx := context.Background()
	key := mcpauth.Key{Server: "https://mcp.example.com/mcp"}
	_ = mcpauth.Save(cx, store, key, &mcpauth.Record{
		Resource: key.Server,
		Issuer:   "https://auth.example.com",
		Client:   &mcpauth.ClientInfo{ID: "abc", Kind: mcpauth.KindDynamic},
		Token:    &mcpauth.Token{AccessToken: "secret-access", RefreshToken: "secret-refresh", Scope: "mcp:read"},
	})
	rec, _ := store.Load(cx, key)
	fmt.Println(rec.Token.Scope, rec.Client.Kind)
	fmt.Println(rec.Token)
	fi, _ := os.Stat(store.Path())
	fmt.Println(fi.Mode().Perm())
	// Output:
	// mcp:read dynamic
	// token(access=true refresh=true expiry=0001-01-01T00:00:00Z scope="mcp:read")
	// -rw-------
}

// A client that may not open a browser reports a missing login as an ErrNeedsAuth error
// that tells the user what to run.
func ExampleNeedsAuthError() {
	var err error = &mcpauth.NeedsAuthError{Server: "linear", Reason: "not logged in", Hint: mcpauth.LoginHint("linear")}
	fmt.Println(err)
	fmt.Println(errors.Is(err, mcpauth.ErrNeedsAuth))
	// Output:
	// mcp server "linear" needs authorization (not logged in): run `harness mcp login linear`
	// true
}
