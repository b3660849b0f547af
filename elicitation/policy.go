package elicitation

import (
	"context"
	"fmt"
)

// Policy names what a non-interactive run does with elicitations: the value of
// `--elicitation` and of the configuration key of the same name.
type Policy string

// The policies.
const (
	// PolicyDecline provides no responder: the capability is not advertised, so servers do
	// not ask (the default when nobody can answer).
	PolicyDecline Policy = "decline"
	// PolicyDefaults accepts every form with its defaults ([Defaults]).
	PolicyDefaults Policy = "defaults"
	// PolicyAsk asks a person, on the host's own interactive surface (the harness binary's
	// terminal form) when there is one, and is PolicyDecline otherwise.
	PolicyAsk Policy = "ask"
)

// PolicyEnv is the environment variable that sets the harness's policy, below its
// --elicitation flag and above a profile's elicitation key.
const PolicyEnv = "HARNESS_ELICITATION"

// ResolvePolicy returns the policy a harness command runs with: flag's (--elicitation),
// else env's ($HARNESS_ELICITATION's value), else profile's (the profile's elicitation key),
// else PolicyAsk. A bad name is an error naming where it was given.
func ResolvePolicy(flag, env, profile string) (Policy, error) {
	for _, v := range []struct{ where, name string }{{"--elicitation", flag}, {"$" + PolicyEnv, env}, {"the profile's elicitation key", profile}} {
		if v.name == "" {
			continue
		}
		p, err := ParsePolicy(v.name)
		if err != nil {
			return "", fmt.Errorf("%s: %w", v.where, err)
		}
		return p, nil
	}
	return PolicyAsk, nil
}

// ParsePolicy checks a policy's name.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case PolicyDecline, PolicyDefaults, PolicyAsk:
		return p, nil
	}
	return "", fmt.Errorf("elicitation policy %q: want %q, %q or %q", s, PolicyDecline, PolicyDefaults, PolicyAsk)
}

// Defaults is the responder of PolicyDefaults: it accepts a form with every field filled from
// the schema's defaults (SEP-1034) and declines when a required field has none. It answers
// forms only (a URL needs a person). It is stateless and safe for concurrent use.
type Defaults struct{}

// Supports reports true for ModeForm.
func (Defaults) Supports(m Mode) bool { return m == ModeForm }

// Elicit answers r from its defaults.
func (Defaults) Elicit(_ context.Context, r *Request) (*Response, error) {
	content, err := r.Form.Defaults()
	if err != nil {
		return &Response{Action: Decline}, nil
	}
	return &Response{Action: Accept, Content: content}, nil
}
