//go:build !unix

package workspace

import "io/fs"

// hardLinked cannot tell here: os.FileInfo carries no link count.
func hardLinked(fs.FileInfo) bool { return false }
