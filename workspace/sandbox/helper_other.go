//go:build !unix

package sandbox

// Main returns at once: the helper needs Unix process groups and signals.
func Main() {}

// HelperFailed is the exit status of a helper that could not run its command.
const HelperFailed = 125
