package examples

import (
	"fmt"
	"time"

	"github.com/cordisgo/harness/ctx"
)

// Ticked is emitted with the time of every tick.
var Ticked = ctx.NewEvent[time.Time]("clock/ticked")

// Tick listens to Ticked for as long as c lives, then emits one tick.
func Tick(c *ctx.Context, now time.Time) error {
	if _, err := Ticked.On(c, func(t time.Time) error { // the listener is an effect of c
		fmt.Println("ticked at", t.Format(time.Kitchen))
		return nil
	}); err != nil {
		return err
	}
	return Ticked.Emit(c, now) // to every listener in order; stops at the first error
}
