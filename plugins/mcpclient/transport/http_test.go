package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHeaderRoundTripperDoesNotOverrideProtocolHeaders(t *testing.T) {
	t.Parallel()
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	headers := http.Header{}
	headers.Set("Content-Type", "text/plain")
	headers.Set("X-Extra", "1")
	client := &http.Client{Transport: &headerRoundTripper{base: base, headers: headers}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Get("Content-Type") != "application/json" || got.Get("X-Extra") != "1" {
		t.Errorf("headers = %v", got)
	}
	if req.Header.Get("X-Extra") != "" {
		t.Error("RoundTrip modified the caller's request")
	}
}
