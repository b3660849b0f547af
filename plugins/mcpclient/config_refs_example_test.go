package mcpclient_test

import (
	"errors"
	"fmt"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/secrets"
)

// vault is a credentials provider with one secret.
type vault map[string]string

func (v vault) Lookup(name string) (string, error) {
	if s, ok := v[name]; ok {
		return s, nil
	}
	return "", secrets.ErrSecretNotFound
}

// Expand resolves the references of a configuration; the configuration as written keeps
// them, and what is shown of it never holds the values.
func ExampleConfig_Expand() {
	cfg := mcpclient.Config{
		ServerName: "ev", Transport: mcpclient.TransportStreamableHTTP,
		URL:     "https://${EV_HOST:-ev.example.com}/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${secret:evtoken}"},
	}
	r := &secrets.Resolver{
		LookupEnv: func(string) (string, bool) { return "", false },
		Secrets:   func() (secrets.Credentials, error) { return vault{"evtoken": "ev-0123456789"}, nil },
	}
	resolved, err := cfg.Expand(r)
	fmt.Println(resolved.URL, resolved.Headers["Authorization"], err)
	fmt.Println(cfg.Redacted().Headers["Authorization"])

	_, err = mcpclient.Config{ServerName: "x", Transport: mcpclient.TransportStdio, Command: "${MISSING_CMD}"}.Expand(r)
	fmt.Println(err, errors.Is(err, secrets.ErrMissingVariable))
	// Output:
	// https://ev.example.com/mcp Bearer ev-0123456789 <nil>
	// Bearer ${secret:evtoken}
	// key "command": ${MISSING_CMD}: environment variable is not set (set it, or write ${MISSING_CMD:-default}) true
}
