package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/hostgateway"
)

// gatewayTokenFileName is the file in harnessDir that keeps the gateway's bearer token
// across restarts (mode 0600), so that configured clients keep working.
const gatewayTokenFileName = "gateway.token"

// gatewayToken returns the gateway's bearer token: --token-file's, else
// HARNESS_GATEWAY_TOKEN, else the one kept in gateway.token in harnessDir, made (mode
// 0600) when there is none yet or rotate asks for a new one. source names where it came
// from, for messages.
func (a *invocation) gatewayToken(tokenFile string, rotate bool) (tok, source string, err error) {
	if tokenFile != "" {
		if rotate {
			return "", "", errors.New("--rotate-token: the token comes from --token-file; replace that file's content instead")
		}
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", "", fmt.Errorf("--token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", "", fmt.Errorf("--token-file %s: empty", tokenFile)
		}
		return tok, tokenFile, nil
	}
	if v, ok := lookupEnv(a.env, "HARNESS_GATEWAY_TOKEN"); ok && v != "" {
		if rotate {
			return "", "", errors.New("--rotate-token: the token comes from $HARNESS_GATEWAY_TOKEN; change the variable instead")
		}
		return v, "$HARNESS_GATEWAY_TOKEN", nil
	}
	dir, err := a.harnessDir()
	if err != nil {
		return "", "", fmt.Errorf("no place to keep the gateway token: %w (give one with --token-file)", err)
	}
	path := filepath.Join(dir, gatewayTokenFileName)
	tok, err = hostgateway.KeptToken(path, rotate)
	return tok, path, err
}

// printGatewayClient prints the configuration of gf.printClient for the gateway running
// from endpointFile (its URL and token, as its endpoint file says), or, when none runs or
// --addr is given, for the gateway that serve --addr would serve with token.
func (a *invocation) printGatewayClient(gf *gatewayFlags, endpointFile, token string) error {
	client := gf.printClient
	var url string
	if running, ok := hostgateway.Running(endpointFile); ok && !gf.flags.Changed("addr") {
		url, token = running.URL, running.Token
		a.out().Note("the gateway of the host running as pid %d (%s)", running.PID, endpointFile)
	} else {
		host, port, err := net.SplitHostPort(gf.addr)
		if err != nil || port == "0" {
			return usageErrorf("serve: --print-client-config needs the gateway's fixed address (--addr HOST:PORT, not port 0), got %q", gf.addr)
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		url = "http://" + net.JoinHostPort(host, port) + gateway.PathAggregated
	}
	err := hostgateway.PrintClientConfig(a.stdout, client, url, token)
	if ue, ok := errors.AsType[*hostgateway.UnknownClientError](err); ok {
		return usageErrorf("serve: %v%s", ue, nearest(client, hostgateway.ClientNames()))
	}
	return err
}
