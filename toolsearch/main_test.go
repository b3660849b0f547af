package toolsearch_test

import (
	"os"
	"testing"

	"github.com/cordisgo/harness/testkit/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

func readFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}
