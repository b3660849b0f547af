package remote

import (
	"testing"

	"github.com/cordisgo/harness/internal/grammartest"
)

func TestValidCodeGrammar(t *testing.T) {
	grammartest.Compare(t, `^[a-z][a-z0-9_./-]{0,63}$`, func(s string) bool { return validCode(Code(s)) }, "zAZ09_./-: \x00é", 64)
}
