package secrets

import (
	"testing"

	"github.com/cordisgo/harness/internal/grammartest"
)

func TestValidSecretNameGrammar(t *testing.T) {
	grammartest.Compare(t, `^[A-Za-z0-9_.-]{1,128}$`, validSecretName, "zAZ09_.-:/ \x00é", 128)
}
