package toolregistry

import (
	"context"
	"errors"
	"time"

	"github.com/cordisgo/harness/ctx"
)

// Key is the tools service. Plugins that register or execute tools inject it:
//
//	ctx.Meta{Name: "mine", Inject: []ctx.Dependency{toolregistry.Key}}
//
// and read it with toolregistry.Key.Use(ctx).
var Key = ctx.NewKey[*Registry]("tools")

// Plugin provides the tools service ([Key]). Its configuration is [Options].
var Plugin = ctx.Define(ctx.Meta{Name: "toolregistry"}, apply)

// Options configures the registry (keys in camelCase). The zero value is not valid; the
// plugin starts from [Options.Default].
//
// Options is a plain value.
type Options struct {
	// HistorySize is how many execution records are kept, newest first out (default 100;
	// 0 keeps none): a window of recent calls for inspection; listen to the tools/executed
	// event for a complete log. The history also keeps at most 32 MiB of arguments and
	// results, dropping the oldest records first. Every record retains its result, and the
	// garbage collector marks the history on every cycle: a window of thousands costs
	// measurable CPU per call in a host whose heap is otherwise small.
	HistorySize int `json:"historySize"`
	// MaxOutputBytes caps the model-facing text of one result (text and JSON blocks);
	// longer output is cut with a marker saying how much was dropped (default 100000).
	MaxOutputBytes int `json:"maxOutputBytes"`
	// AttachmentMaxBytes bounds the attachment store; the oldest attachments are evicted to
	// make room (default 20 MiB; 0 refuses attachments).
	AttachmentMaxBytes int64 `json:"attachmentMaxBytes"`
	// DefaultTimeoutMs bounds executions of tools that declare no timeout (default 120000).
	DefaultTimeoutMs int `json:"defaultTimeoutMs"`
}

// Default sets the defaults.
func (o *Options) Default() {
	*o = Options{HistorySize: 100, MaxOutputBytes: 100_000, AttachmentMaxBytes: 20 << 20, DefaultTimeoutMs: 120_000}
}

// Validate checks the ranges.
func (o Options) Validate() error {
	var errs []error
	if o.HistorySize < 0 {
		errs = append(errs, errors.New("historySize must not be negative"))
	}
	if o.MaxOutputBytes <= 0 {
		errs = append(errs, errors.New("maxOutputBytes must be positive"))
	}
	if o.AttachmentMaxBytes < 0 {
		errs = append(errs, errors.New("attachmentMaxBytes must not be negative"))
	}
	if o.DefaultTimeoutMs <= 0 {
		errs = append(errs, errors.New("defaultTimeoutMs must be positive"))
	}
	return errors.Join(errs...)
}

func (o *Options) defaultTimeout() time.Duration {
	return time.Duration(o.DefaultTimeoutMs) * time.Millisecond
}

func apply(ctx *ctx.Context, cfg Options) error {
	r := newRegistry(ctx.Logger(), cfg)
	if _, err := ctx.Defer("toolregistry:close", func(context.Context) error {
		r.close()
		return nil
	}); err != nil {
		return err
	}
	// Options change in place: nothing registered has to be redone.
	if err := ctx.OnUpdate(func(raw any) bool {
		o := raw.(Options)
		r.opts.Store(&o)
		r.hist.resize(o.HistorySize)
		r.store.setMax(o.AttachmentMaxBytes)
		return true
	}); err != nil {
		return err
	}
	_, err := Key.Provide(ctx, r)
	return err
}
