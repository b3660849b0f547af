package app

import (
	"errors"

	"github.com/cordisgo/harness/hostgateway"
)

// gatewayToken returns the gateway's bearer token (hostgateway.Token): --token-file's,
// else HARNESS_GATEWAY_TOKEN, else the one kept in the harness's configuration directory.
func (a *invocation) gatewayToken(tokenFile string, rotate bool) (string, error) {
	o := hostgateway.TokenOptions{File: tokenFile, Rotate: rotate}
	o.Env, _ = lookupEnv(a.env, "HARNESS_GATEWAY_TOKEN")
	o.Dir, o.DirErr = a.harnessDir()
	return hostgateway.Token(o)
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
		var err error
		if url, err = hostgateway.ClientURL(gf.addr); err != nil {
			return usageErrorf("serve: %v", err)
		}
	}
	err := hostgateway.PrintClientConfig(a.stdout, client, url, token)
	if ue, ok := errors.AsType[*hostgateway.UnknownClientError](err); ok {
		return usageErrorf("serve: %v%s", ue, nearest(client, hostgateway.ClientNames()))
	}
	return err
}
