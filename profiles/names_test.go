package profiles

import (
	"testing"

	"github.com/cordisgo/harness/internal/grammartest"
)

const nameBytes = "zAZ09_-.:/ \x00é"

func TestValidIDGrammar(t *testing.T) {
	grammartest.Compare(t, `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`, validID, nameBytes, 64)
}

func TestValidServerNameGrammar(t *testing.T) {
	grammartest.Compare(t, `^[A-Za-z0-9_-]{1,32}$`, validServerName, nameBytes, 32)
}
