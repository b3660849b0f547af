package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

var publicNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func identityHash(server, raw string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + raw))
	return hex.EncodeToString(sum[:])[:12]
}

func TestPublicToolName(t *testing.T) {
	long := strings.Repeat("a", 80)
	tests := []struct {
		name, server, raw string
		want              string         // exact result, when known
		match             *regexp.Regexp // otherwise a pattern
		wantLen           int            // 0: don't check
		prefix            string
	}{
		{name: "clean", server: "github", raw: "create_issue", want: "mcp__github__create_issue"},
		{name: "dash", server: "everything", raw: "get-sum", want: "mcp__everything__get-sum"},
		{name: "dotted gets hash", server: "srv", raw: "admin.reset",
			want: "mcp__srv__admin_reset_" + identityHash("srv", "admin.reset")},
		{name: "dotted pattern", server: "srv", raw: "admin.reset", match: regexp.MustCompile(`^mcp__srv__admin_reset_[0-9a-f]{12}$`)},
		{name: "too long is cut to 64", server: "srv", raw: long, wantLen: 64, prefix: "mcp__srv__aaa",
			want: ("mcp__srv__" + long)[:51] + "_" + identityHash("srv", long)},
		{name: "exactly 64 clean stays verbatim", server: "s", raw: strings.Repeat("b", 64-len("mcp__s__")),
			want: "mcp__s__" + strings.Repeat("b", 64-len("mcp__s__"))},
		{name: "65 clean is hashed", server: "s", raw: strings.Repeat("b", 65-len("mcp__s__")), wantLen: 64},
		{name: "one rune per underscore", server: "srv", raw: "café",
			want: "mcp__srv__caf__" + identityHash("srv", "café")},
		{name: "astral rune is one underscore", server: "srv", raw: "a😀b",
			want: "mcp__srv__a_b_" + identityHash("srv", "a😀b")},
		{name: "invalid utf8 byte", server: "srv", raw: "a\xffb",
			want: "mcp__srv__a_b_" + identityHash("srv", "a\xffb")},
		{name: "empty raw", server: "srv", raw: "", want: "mcp__srv__"},
		{name: "space and slash", server: "srv", raw: "get file/x", match: regexp.MustCompile(`^mcp__srv__get_file_x_[0-9a-f]{12}$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PublicToolName(tt.server, tt.raw)
			if tt.want != "" && got != tt.want {
				t.Errorf("PublicToolName(%q, %q) = %q, want %q", tt.server, tt.raw, got, tt.want)
			}
			if tt.match != nil && !tt.match.MatchString(got) {
				t.Errorf("PublicToolName(%q, %q) = %q, want match %v", tt.server, tt.raw, got, tt.match)
			}
			if tt.wantLen != 0 && len(got) != tt.wantLen {
				t.Errorf("len = %d, want %d (%q)", len(got), tt.wantLen, got)
			}
			if !strings.HasPrefix(got, tt.prefix) {
				t.Errorf("%q does not start with %q", got, tt.prefix)
			}
			if !publicNamePattern.MatchString(got) {
				t.Errorf("%q is not a valid public name", got)
			}
		})
	}
}

func TestPublicToolNameNoCollision(t *testing.T) {
	dotted := PublicToolName("srv", "admin.reset")
	clean := PublicToolName("srv", "admin_reset")
	if dotted == clean {
		t.Fatalf("admin.reset and admin_reset collide: %q", dotted)
	}
	if clean != "mcp__srv__admin_reset" {
		t.Fatalf("clean name changed: %q", clean)
	}
	// Same raw name on another server: different prefix and hash.
	if PublicToolName("a", "x.y") == PublicToolName("b", "x.y") {
		t.Fatal("servers a and b collide")
	}
	// The hash covers the identity, not the joined string: ("a_b", "c")
	// and ("a", "b_c") join alike but must not share a hashed name.
	if PublicToolName("a_b", "c.") == PublicToolName("a", "b_c.") {
		t.Fatal("identity hash ignores the server/tool boundary")
	}
}

func FuzzPublicToolName(f *testing.F) {
	for _, seed := range [][2]string{
		{"github", "create_issue"}, {"srv", "admin.reset"}, {"srv", strings.Repeat("a", 80)},
		{"x", "😀"}, {"x", "\xff"}, {"", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, server, raw string) {
		got := PublicToolName(server, raw)
		if len(got) > maxToolNameLen {
			t.Fatalf("len %d > %d: %q", len(got), maxToolNameLen, got)
		}
		if !publicNamePattern.MatchString(got) {
			t.Fatalf("invalid charset: %q", got)
		}
		if again := PublicToolName(server, raw); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		joined := "mcp__" + server + "__" + raw
		clean := len(joined) <= maxToolNameLen && strings.IndexFunc(joined, func(r rune) bool { return !isToolNameRune(r) }) < 0
		if clean && got != joined {
			t.Fatalf("clean name %q changed to %q", joined, got)
		}
		if !clean && !strings.HasSuffix(got, "_"+identityHash(server, raw)) {
			t.Fatalf("changed name %q lacks the identity hash", got)
		}
	})
}
