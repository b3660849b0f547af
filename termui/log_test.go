package termui

import (
	"os"
	"strings"
	"testing"
)

func TestColour(t *testing.T) {
	f, err := os.Open(os.DevNull) // a character device, like a terminal
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	if !Colour(f, nil) {
		t.Error("no colour on a character device")
	}
	if Colour(f, env("NO_COLOR", "1")) || Colour(f, env("TERM", "dumb")) {
		t.Error("colour despite NO_COLOR or TERM=dumb")
	}
	if !Colour(f, env("NO_COLOR", "")) {
		t.Error("an empty NO_COLOR must not disable colour")
	}
	if Colour(&strings.Builder{}, nil) {
		t.Error("colour on a buffer")
	}
}
