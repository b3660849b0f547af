// Package words has the small words of messages: the plural ending of a count, and a
// quoted text clipped to a length without splitting a character.
//
// # Concurrency
//
// The functions are pure; they may be called from any goroutine.
package words

// Plural returns "s" unless n is 1, for "%d server%s".
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Clip returns s cut to at most n runes, the last of them "…" when s was longer. It counts
// runes, so it never splits a UTF-8 sequence. An n below 1 returns s.
func Clip(s string, n int) string {
	if n < 1 || len(s) <= n { // no more runes than bytes
		return s
	}
	i, count := 0, 0
	for j := range s {
		if count == n-1 {
			i = j
		}
		count++
	}
	if count <= n {
		return s
	}
	return s[:i] + "…"
}
