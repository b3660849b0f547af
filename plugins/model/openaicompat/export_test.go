package openaicompat

import (
	"context"
	"time"
)

// SetSleep replaces the backoff wait of c (tests record the waits instead of sleeping).
func SetSleep(c *Chat, f func(context.Context, time.Duration) error) { c.sleep = f }
