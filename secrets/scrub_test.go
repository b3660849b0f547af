package secrets_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/secrets"
)

func TestScrubber(t *testing.T) {
	var s secrets.Scrubber
	if got := s.Replace("nothing known"); got != "nothing known" || !s.Empty() {
		t.Fatalf("empty scrubber changed text: %q", got)
	}
	s.AddSecret("abc")                   // shorter than MinSecret: ignored
	s.AddValue("short")                  // shorter than MinValue: ignored
	s.AddSecret("Bearer tok-0123456789") // the whole header and the token alone
	s.AddSecret("tok-0123456789-longer") // contains the other: masked whole
	s.AddValue("configured-value")
	if got := s.Values(); len(got) != 4 {
		t.Fatalf("values: %q", got)
	}
	in := "abc short tok-0123456789 tok-0123456789-longer Bearer tok-0123456789 configured-value"
	want := "abc short [redacted] [redacted] [redacted] [redacted]"
	if got := s.Replace(in); got != want {
		t.Errorf("Replace:\n got %q\nwant %q", got, want)
	}

	var nilS *secrets.Scrubber
	nilS.AddSecret("whatever-secret")
	if nilS.Replace("whatever-secret") != "whatever-secret" || !nilS.Empty() || nilS.Values() != nil {
		t.Error("a nil scrubber must mask nothing and hold nothing")
	}
}

// TestScrubberJSON: a value is masked in JSON text as it appears there — escaped once in a
// string, twice in a string that holds JSON — and the result stays valid JSON.
func TestScrubberJSON(t *testing.T) {
	var s secrets.Scrubber
	secret := `pa"ss\word<&>` + "\t1"
	s.AddSecret(secret)
	s.AddSecret("plain-token-123")
	inner, _ := json.Marshal(map[string]string{"env": "PW=" + secret + " T=plain-token-123"})
	outer, _ := json.Marshal(map[string]string{"result": string(inner), "direct": secret})
	got := s.ReplaceJSON(outer)
	if !json.Valid(got) {
		t.Fatalf("not JSON any more: %s", got)
	}
	var back map[string]string
	_ = json.Unmarshal(got, &back)
	if strings.Contains(back["result"]+back["direct"], secret) || strings.Contains(string(got), "plain-token-123") {
		t.Errorf("a secret survived: %s", got)
	}
	if back["direct"] != redact.Marker || !strings.Contains(back["result"], "PW="+redact.Marker) {
		t.Errorf("masked: %s", got)
	}
}

func TestScrubberConcurrent(t *testing.T) {
	var s secrets.Scrubber
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				v := fmt.Sprintf("secret-%02d-%02d", i, j)
				s.AddSecret(v)
				if got := s.Replace("x " + v + " y"); got != "x "+redact.Marker+" y" {
					t.Errorf("%s: %q", v, got)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := len(s.Values()); n != 400 {
		t.Errorf("%d values, want 400", n)
	}
}

// The host's scrubber learns the values its resolvers substitute; text written anywhere
// durable passes through it.
func ExampleScrubber() {
	scrub := new(secrets.Scrubber)
	r := &secrets.Resolver{
		LookupEnv: func(k string) (string, bool) { return "ghp_exampleToken123", k == "GITHUB_TOKEN" },
		Scrubber:  scrub,
	}
	header, _ := r.Expand("Bearer ${GITHUB_TOKEN}")
	fmt.Println(len(header) > 0)
	fmt.Println(scrub.Replace("the server printed GITHUB_TOKEN=ghp_exampleToken123"))
	// Output:
	// true
	// the server printed GITHUB_TOKEN=[redacted]
}
