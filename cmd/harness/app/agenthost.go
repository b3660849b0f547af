package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/cordisgo/harness/hostclient"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/turn"
)

// runningAgentHost returns the running host whose agent a turn can use, or nil: no host (or
// --local, or a profile given on the command line), or a host without an agent, said in one
// line, or a choice the host's agent cannot honour (--mode, --allow: its permissions are
// its own), said in one line too.
func (a *invocation) runningAgentHost(cx context.Context, f agentFlags) (*hostclient.Host, error) {
	rh, err := hostclient.Find(cx, a.findOptions(a.fwd))
	if err != nil || rh == nil {
		return nil, err
	}
	switch {
	case !rh.Serves(agentapi.MethodStart.Name()):
		a.out().Note("%s has no agent (its profile mounts no model or agent); working in process", rh)
		return nil, nil
	case rh.Info.AgentProblem != "":
		return nil, profileError(fmt.Errorf("%s: an agent did not start: %s", rh, rh.Info.AgentProblem))
	case f.mode != "":
		a.out().Note("--mode: the agent of %s runs in its own mode; working in process", rh)
		return nil, nil
	case len(f.allow) > 0:
		a.out().Note("--allow: the agent of %s has its own permissions; working in process", rh)
		return nil, nil
	}
	return rh, nil
}

// agentHostError words a host's refusal of an agent method (a *turn.MethodError): an
// unknown agent or model is a usage error, as in process.
func (a *invocation) agentHostError(cx context.Context, rh *hostclient.Host, err error) error {
	if cx.Err() != nil {
		return failure(errors.New("interrupted"))
	}
	if me, ok := errors.AsType[*turn.MethodError](err); ok {
		return agentError(fmt.Errorf("%s: %s: %w", rh, me.Method, err))
	}
	return agentError(fmt.Errorf("%s: %w", rh, err))
}
