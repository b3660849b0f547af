package toolsearch_test

import (
	"testing"

	"github.com/cordisgo/harness/internal/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }
