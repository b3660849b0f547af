package session

import (
	"errors"
	"strings"
	"testing"
)

// An unknown id is an *UnknownError that wraps ErrUnknownSession and names the store; an
// empty store has no last session yet.
func TestReadIDUnknown(t *testing.T) {
	st := OpenStore(t.TempDir())
	_, err := st.ReadID("20261203-100000-abcdef")
	ue, ok := errors.AsType[*UnknownError](err)
	if !ok || !errors.Is(err, ErrUnknownSession) || !strings.Contains(err.Error(), st.Dir()) {
		t.Fatalf("unknown id: %v", err)
	}
	if ue.ID != "20261203-100000-abcdef" {
		t.Errorf("ID: %q", ue.ID)
	}
	if _, err := st.ReadID(Last); err == nil || !strings.Contains(err.Error(), "no stored session in") {
		t.Errorf("last of an empty store: %v", err)
	}
}
