//go:build !unix

package app

// processAlive reports whether a process with id pid may exist: without a cheap check, it
// assumes so (an endpoint file is then never taken over).
func processAlive(int) bool { return true }
