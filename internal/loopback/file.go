package loopback

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/cordisgo/harness/internal/atomicfile"
)

// Endpoint is what every endpoint file holds, whatever else it says: where its host serves
// and the host's process.
type Endpoint struct {
	// URL is where the host serves.
	URL string `json:"url"`
	// PID is the host's process id.
	PID int `json:"pid"`
}

// WriteFile writes data to path with mode 0600 through a temporary file in the same
// directory and a rename, creating the directory with mode 0700 if needed. Readers see the
// old content or the new one, never a part.
func WriteFile(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{Mode: 0o600, DirMode: 0o700})
}

// RemoveFile removes path if it still holds data. Another host configured with the same
// file may have replaced it since; that host's file is left alone.
func RemoveFile(path string, data []byte) error {
	got, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !bytes.Equal(got, data):
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Held reads the endpoint file at path and reports the host it names when that host is
// running: its process exists and its URL's address accepts connections (a process id
// reused by an unrelated process does not listen there). A missing or unreadable file, or
// a host that is gone, is held by no one; the endpoint read is returned either way.
func Held(path string) (Endpoint, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Endpoint{}, false
	}
	var ep Endpoint
	if json.Unmarshal(b, &ep) != nil || ep.PID <= 0 || !ProcessAlive(ep.PID) {
		return ep, false
	}
	u, err := url.Parse(ep.URL)
	if err != nil || u.Host == "" {
		return ep, false
	}
	conn, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		return ep, false
	}
	_ = conn.Close()
	return ep, true
}
