package remote

import (
	"testing"

	"github.com/cordisgo/harness/internal/grammartest"
)

func TestValidCodeGrammar(t *testing.T) {
	grammartest.Compare(t, `^[a-z][a-z0-9_./-]{0,63}$`, validCode, "zAZ09_./-: \x00é", 64)
}
