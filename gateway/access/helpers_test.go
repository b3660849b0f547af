package access_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func tokenInfo(user string) *auth.TokenInfo { return &auth.TokenInfo{UserID: user} }
