//go:build !unix

package mcpauth

// lockFile is a no-op where flock is unavailable: the in-process mutex still serialises
// one process's updates, and the atomic rename keeps the file whole.
func lockFile(string) (func(), error) { return func() {}, nil }
