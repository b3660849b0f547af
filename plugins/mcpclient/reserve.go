package mcpclient

import (
	"errors"
	"fmt"

	"github.com/cordisgo/harness/ctx"
)

// ErrDuplicateServer is matched (errors.Is) by the load error of a client whose serverName
// is already used by another client in the same registration scope.
var ErrDuplicateServer = errors.New("mcp serverName already in use")

// serverNames holds, per tree, the serverName reservations of each registration scope: the
// layer a client registers its tools and prompt section into ([ctx.Context.Layer]), the
// agent scope it is mounted in or the root. The value is the holding client's scope.
var serverNames = ctx.NewTreeLayers[*ctx.Scope]("mcpclient:serverName")

// reserve claims server in c's registration scope as an effect of c: the claim is released
// when c's scope unloads. A name held by another client of the same scope is an error naming
// the server; the holder is not affected.
func reserve(c *ctx.Context, server string) error {
	_, err := serverNames.In(c).Add(c, server, c.Scope(), nil)
	if de := (*ctx.DuplicateError[*ctx.Scope])(nil); errors.As(err, &de) {
		return fmt.Errorf("mcp server %q: serverName is already used in scope %q by another mcpclient instance (%s) — pick a unique serverName: %w",
			server, de.Layer.Name(), de.Existing, ErrDuplicateServer)
	}
	if err != nil {
		return fmt.Errorf("mcp server %q: %w", server, err)
	}
	return nil
}
