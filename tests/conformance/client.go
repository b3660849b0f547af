package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Environment the suite sets for each client run.
const (
	// ScenarioEnv names the scenario.
	ScenarioEnv = "MCP_CONFORMANCE_SCENARIO"
	// ContextEnv is a JSON object with scenario data (pre-registered client credentials, a
	// private key, an identity provider).
	ContextEnv = "MCP_CONFORMANCE_CONTEXT"
)

// ClientMetadataURL is the client ID metadata document URL the client configures (the
// suite's authorization servers accept any https URL and do not fetch it).
const ClientMetadataURL = "https://conformance-test.local/client-metadata.json"

// Scenario is one client run the suite asks for. It is a plain value.
type Scenario struct {
	// Name is the scenario (MCP_CONFORMANCE_SCENARIO).
	Name string
	// URL is the scenario server's MCP endpoint (the command's last argument).
	URL string
	// Context is the decoded MCP_CONFORMANCE_CONTEXT (nil when unset).
	Context map[string]any
	// Dir holds files the configuration names (a private key, an ID token).
	Dir string
	// Logger receives the client's diagnostics (nil: discarded).
	Logger *slog.Logger
}

// ScenarioFromEnv reads the scenario of this process: the name and context from the
// environment, the URL from the last argument.
func ScenarioFromEnv(args []string) (Scenario, error) {
	s := Scenario{Name: os.Getenv(ScenarioEnv)}
	if s.Name == "" {
		return s, fmt.Errorf("%s is not set", ScenarioEnv)
	}
	if len(args) == 0 {
		return s, errors.New("want the server URL as the last argument")
	}
	s.URL = args[len(args)-1]
	if raw := os.Getenv(ContextEnv); raw != "" {
		if err := json.Unmarshal([]byte(raw), &s.Context); err != nil {
			return s, fmt.Errorf("%s: %w", ContextEnv, err)
		}
	}
	return s, nil
}

func (s Scenario) str(key string) string {
	v, _ := s.Context[key].(string)
	return v
}

// Config is the mcpclient configuration a user would write for the scenario's server: a
// streamable-http entry, with the oauth block the scenario's context calls for
// (pre-registered credentials, a machine-to-machine grant, enterprise access).
func (s Scenario) Config() (mcpclient.Config, error) {
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.URL = "conformance", mcpclient.TransportStreamableHTTP, s.URL
	cfg.StartupTimeoutMs = 20_000
	cfg.ToolCallTimeoutMs = 20_000
	o := &cfg.OAuth
	o.ClientID, o.ClientSecret = s.str("client_id"), s.str("client_secret")
	// The client ID metadata document a deployment would host; used where the
	// authorization server supports it, else dynamic registration.
	o.ClientMetadataURL = ClientMetadataURL
	switch {
	case s.str("idp_issuer") != "":
		o.Grant = mcpauth.GrantEnterprise
		o.IdPIssuer, o.IdPClientID, o.IdPClientSecret = s.str("idp_issuer"), s.str("idp_client_id"), s.str("idp_client_secret")
		o.IdPTokenEndpoint = s.str("idp_token_endpoint")
		o.IDTokenFile = filepath.Join(s.Dir, "id-token")
		if err := os.WriteFile(o.IDTokenFile, []byte(s.str("idp_id_token")), 0o600); err != nil {
			return cfg, err
		}
	case s.str("private_key_pem") != "":
		o.Grant = mcpauth.GrantClientCredentials
		o.SigningAlg = s.str("signing_algorithm")
		o.PrivateKeyFile = filepath.Join(s.Dir, "key.pem")
		if err := os.WriteFile(o.PrivateKeyFile, []byte(s.str("private_key_pem")), 0o600); err != nil {
			return cfg, err
		}
	case strings.HasPrefix(s.Name, "auth/client-credentials"):
		o.Grant = mcpauth.GrantClientCredentials
	}
	return cfg, cfg.Validate()
}

// RunClient is the harness as the suite's client: it mounts an MCP client (plugins/mcpclient,
// as a profile row does) for the scenario's server on a fresh tree with an in-memory
// credentials store; when the client reports that the server needs a login it logs in as
// `harness mcp login` does (the browser replaced by a user agent that follows the
// authorization server's redirect), then lists the tools and calls the scenario's tool.
// A call refused for want of authorization (a step-up) is followed by another login, as
// the hint says, at most [mcpauth.MaxStepUps] times.
func RunClient(cx context.Context, s Scenario) error {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := s.Config()
	if err != nil {
		return err
	}
	store := &mcpauth.MemoryStore{}
	mcpclient.SetCredentialsStore(store)
	defer mcpclient.SetCredentialsStore(nil)

	root := ctx.New(ctx.Options{Logger: log})
	defer func() { _ = root.Scope().Dispose(context.Background()) }()
	statuses := make(chan mcpclient.Status, 64)
	if _, err := mcpclient.StatusEvent.On(root, func(st mcpclient.Status) error {
		select {
		case statuses <- st:
		default:
		}
		return nil
	}); err != nil {
		return err
	}
	// A non-interactive run answers a server's questions with the form's defaults
	// (`--elicitation defaults`), and the person at the terminal opens the pages a server
	// asks them to visit (a step-up's authorization page among them): here the user agent
	// that follows the scenario's redirects.
	if _, err := elicitation.Provide(root, "defaults", elicitation.Defaults{}); err != nil {
		return err
	}
	if _, err := elicitation.Provide(root, "browser", browser{}); err != nil {
		return err
	}
	reg, err := root.Plugin(toolregistry.Plugin, nil)
	if err != nil {
		return err
	}
	if err := reg.Wait(cx); err != nil {
		return err
	}
	if _, err := root.Plugin(mcpclient.Plugin, cfg); err != nil {
		return err
	}
	login := func() error {
		opts := cfg.AuthOptions(store)
		opts.Interactive, opts.OpenURL, opts.Logger = true, followRedirect, log
		a, err := mcpauth.New(opts)
		if err != nil {
			return err
		}
		return a.Login(cx)
	}
	logins := 0
	var up *mcpclient.Upstream
	for up == nil {
		select {
		case st := <-statuses:
			switch st.Phase {
			case mcpclient.PhaseConnected:
				u, ok := mcpclient.LookupUpstream(root, cfg.ServerName)
				if !ok {
					return errors.New("connected, but no upstream is published")
				}
				up = u
			case mcpclient.PhaseNeedsAuth:
				if logins++; logins > 1+mcpauth.MaxStepUps {
					return fmt.Errorf("still needs authorization after %d logins: %s", logins-1, st.Err)
				}
				if err := login(); err != nil {
					return fmt.Errorf("login: %w", err)
				}
			case mcpclient.PhaseFailed, mcpclient.PhaseReconnecting:
				// One run, as `harness tools call` is: no reconnecting to a server that
				// refused (the retry-limit scenario ends the test with 410 Gone).
				return fmt.Errorf("connection failed: %s", st.Err)
			}
		case <-cx.Done():
			return context.Cause(cx)
		}
	}
	sess := up.Session()
	tools, err := sess.ListTools(cx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	name, args := "", map[string]any{}
	for _, t := range tools.Tools {
		switch t.Name {
		case "add_numbers":
			name, args = t.Name, map[string]any{"a": 5, "b": 3}
		case "test-tool", "test_client_elicitation_defaults", "test_reconnection":
			name = t.Name
		}
	}
	if name == "" {
		return nil
	}
	// A call refused for more scope (403 insufficient_scope) is re-authorized in band by the
	// client, through the browser responder, and retried: no login of the adapter's.
	if _, err := sess.CallTool(cx, &mcp.CallToolParams{Name: name, Arguments: args}); err != nil {
		return fmt.Errorf("tools/call %s: %w", name, err)
	}
	return nil
}

// browser is the person at the terminal with a browser: it opens the page a URL-mode
// elicitation names (following the scenario's redirects, back to the client's listener)
// and says it did. It is stateless, so safe for concurrent use.
type browser struct{}

func (browser) Supports(m elicitation.Mode) bool { return m == elicitation.ModeURL }

func (browser) Elicit(cx context.Context, r *elicitation.Request) (*elicitation.Response, error) {
	if err := followRedirect(cx, r.URL); err != nil {
		return nil, err
	}
	return &elicitation.Response{Action: elicitation.Accept}, nil
}

// followRedirect is the user agent of a conformance login: the scenario's authorization
// server redirects at once to the client's loopback listener, which this follows.
func followRedirect(cx context.Context, url string) error {
	cx, cancel := context.WithTimeout(cx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the redirect ended at %s with %s", resp.Request.URL.Redacted(), resp.Status)
	}
	return nil
}
