package mcpmanager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/secrets"
)

// ProbeResolve is the stage a probe fails at when the entry's templates cannot be resolved
// or the resolved configuration is invalid; it comes before the client's stages
// (connect, initialize, list-tools).
const ProbeResolve mcpclient.ProbeStage = "resolve"

// Probe option bounds.
const (
	// DefaultProbeBudgetMs bounds a whole probe by default: a cold `npx -y` start plus a
	// listing fits, a wedged server does not hold a management surface for long.
	DefaultProbeBudgetMs = 60_000
	maxProbeBudgetMs     = 10 * 60_000
	maxProbeTools        = 10_000
	maxProbeDescBytes    = 64 << 10
)

// ProbeOptions bounds a probe. The zero value uses the defaults.
//
// ProbeOptions is a plain value.
type ProbeOptions struct {
	// BudgetMs bounds the whole probe: resolve, connect, list tools and close
	// (default 60000, at most 600000). Each client stage is also bounded by the entry's
	// startupTimeoutMs.
	BudgetMs int `json:"budgetMs,omitempty"`
	// MaxTools caps the tools listed (default 200, at most 10000).
	MaxTools int `json:"maxTools,omitempty"`
	// MaxDescriptionBytes caps each tool description (default 1024, at most 65536).
	MaxDescriptionBytes int `json:"maxDescriptionBytes,omitempty"`
}

// validate checks the ranges.
func (o ProbeOptions) validate() error {
	switch {
	case o.BudgetMs < 0 || o.BudgetMs > maxProbeBudgetMs:
		return fmt.Errorf("budgetMs must be between 1 and %d (0 for the default), got %d", maxProbeBudgetMs, o.BudgetMs)
	case o.MaxTools < 0 || o.MaxTools > maxProbeTools:
		return fmt.Errorf("maxTools must be between 1 and %d (0 for the default), got %d", maxProbeTools, o.MaxTools)
	case o.MaxDescriptionBytes < 0 || o.MaxDescriptionBytes > maxProbeDescBytes:
		return fmt.Errorf("maxDescriptionBytes must be between 1 and %d (0 for the default), got %d", maxProbeDescBytes, o.MaxDescriptionBytes)
	}
	return nil
}

func (o ProbeOptions) budget() time.Duration {
	if o.BudgetMs == 0 {
		return DefaultProbeBudgetMs * time.Millisecond
	}
	return time.Duration(o.BudgetMs) * time.Millisecond
}

// ProbeResult is the outcome of [Manager.Probe]: the client's stage-classified result
// (stage resolve, connect, initialize, list-tools or ok, error, server info, the capped
// tool listing, timings and the independent cleanup result), plus the server's name and
// source, the time spent resolving, and whether the probe was cancelled. No text in it
// carries a secret.
//
// A ProbeResult is a value.
type ProbeResult struct {
	// Name is the server probed; Source where its entry comes from.
	Name   string `json:"name"`
	Source Source `json:"source"`
	mcpclient.ProbeResult
	// Resolve is the time spent resolving templates and credentials.
	Resolve time.Duration `json:"resolveNs"`
	// Cancelled is true when the probe was cancelled (by the caller, a change of the
	// entry, or the manager stopping) before it finished; Error says by what.
	Cancelled bool `json:"cancelled,omitempty"`
}

// clientProbe is the production probe.
func clientProbe(cx context.Context, cfg mcpclient.Config, opts ProbeOptions) mcpclient.ProbeResult {
	return mcpclient.Probe(cx, cfg, mcpclient.ProbeOptions{MaxTools: opts.MaxTools, MaxDescriptionBytes: opts.MaxDescriptionBytes})
}

// Probe tests the server called name without touching its live instance: it resolves the
// entry's templates, connects, lists the tools and closes. Disabled entries can be probed
// (that is how a surface tests an entry before enabling it). The probe is cancelled when
// rc ends, when the entry changes or the server is replaced (restart, reload), and when
// the manager stops; the result then says so.
//
// It fails with [ErrNotFound] for an unknown name, [ErrConflict] while the server is being
// replaced or when its cleanup is incomplete ([ErrCleanupIncomplete]), [ErrBadRequest]
// for invalid options, and [ErrUnavailable] when the manager is stopped or the entry
// needs a credentials provider and none is available. Every other failure is a result.
func (m *Manager) Probe(rcx context.Context, name string, opts ProbeOptions) (ProbeResult, error) {
	if err := opts.validate(); err != nil {
		return ProbeResult{}, errorf(CodeBadRequest, name, "probe options: %v", err)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ProbeResult{}, errClosed()
	}
	rec := m.records[name]
	var d desired
	ok := false
	if rec != nil {
		d, ok = m.desiredLocked(rec)
	} else if e := m.settingsEntryLocked(name); e != nil {
		d, ok = desired{e: e, src: SourceSettings}, true
	}
	switch {
	case !ok:
		m.mu.Unlock()
		return ProbeResult{}, errorf(CodeNotFound, name, "no configured or registered server has this name")
	case rec != nil && rec.blocked:
		m.mu.Unlock()
		return ProbeResult{}, errCleanup(name)
	case rec != nil && m.changingLocked(rec):
		m.mu.Unlock()
		return ProbeResult{}, errorf(CodeConflict, name, "the server is being replaced; probe again once it is")
	}
	if rec == nil {
		rec = m.recordLocked(name)
	}
	pcx, cancel := context.WithCancelCause(rcx)
	run := &probeRun{cancel: cancel, done: make(chan struct{})}
	rec.probes[run] = struct{}{}
	m.mu.Unlock()
	defer func() {
		cancel(nil)
		m.mu.Lock()
		delete(rec.probes, run)
		close(run.done)
		if _, ok := m.desiredLocked(rec); !ok {
			m.kickLocked(rec) // its worker forgets it
		}
		m.mu.Unlock()
	}()
	// The probe is an effect of the manager's scope: its unload cancels the probe and waits
	// for it to return.
	var out ProbeResult
	var perr error
	dispose, err := m.c.Effect("mcpManager.probe:"+name, func(e *ctx.Effect) error {
		stop := context.AfterFunc(e.Context(), func() { cancel(errors.New("the manager is stopping")) })
		defer stop()
		out, perr = m.probe(pcx, name, d, opts)
		return nil
	})
	if err != nil {
		return ProbeResult{}, errClosed()
	}
	_ = dispose(context.Background()) // registered nothing: only detaches the effect
	return out, perr
}

// probe runs one probe of d, cancelled by pctx.
func (m *Manager) probe(pcx context.Context, name string, d desired, opts ProbeOptions) (ProbeResult, error) {
	budgetcx, cancelBudget := context.WithTimeoutCause(pcx, opts.budget(),
		fmt.Errorf("the probe budget of %v ran out", opts.budget()))
	defer cancelBudget()

	out := ProbeResult{Name: name, Source: d.src}
	start := time.Now()
	r := &secrets.Resolver{LookupEnv: m.hk.lookupEnv, Secrets: m.credentials, Scrubber: secrets.ScrubberOf(m.c)}
	res, err := d.e.resolve(r)
	out.Resolve = time.Since(start)
	if err != nil {
		if errors.Is(err, secrets.ErrNoCredentials) {
			return ProbeResult{}, errorf(CodeUnavailable, name, "%v", err)
		}
		out.Stage = ProbeResolve
		out.Err = err.Error()
		if res != nil {
			out.Err = res.scrub.Replace(out.Err)
		}
		out.Cleanup.Outcome = mcpclient.CleanupClosed
		out.Timings.Total = out.Resolve
		return out, nil
	}
	cr := m.hk.probe(budgetcx, res.cfg, opts)
	out.ProbeResult = cr
	out.Err = res.scrub.Replace(cr.Err)
	out.StderrTail = res.scrub.Replace(cr.StderrTail)
	out.Cleanup.Err = res.scrub.Replace(cr.Cleanup.Err)
	out.Timings.Total += out.Resolve
	if !cr.OK() {
		var cause error
		switch {
		case pcx.Err() != nil:
			out.Cancelled = true
			cause = fmt.Errorf("probe cancelled: %w", context.Cause(pcx))
		case budgetcx.Err() != nil:
			cause = context.Cause(budgetcx)
		}
		if cause != nil {
			if out.Err == "" {
				out.Err = cause.Error()
			} else {
				out.Err = fmt.Sprintf("%s (%v)", out.Err, cause)
			}
		}
	}
	if cr.Cleanup.Outcome == mcpclient.CleanupIncomplete {
		m.log.Error("mcp server probe: cleanup incomplete", "server", name, "err", out.Cleanup.Err)
	}
	return out, nil
}
