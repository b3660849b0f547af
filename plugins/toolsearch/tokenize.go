package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// isCJK reports whether r belongs to a script written without spaces between words (Han,
// Hiragana, Katakana, Hangul, Thai, Lao, Khmer, Myanmar): such runs are indexed as
// character bigrams.
func isCJK(r rune) bool {
	if r < 0x0E00 { // below Thai: Latin, Greek, Cyrillic, Arabic, Indic scripts…
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// words splits text into the index's terms, in order: identifiers are cut at '_', '-', '.',
// case changes (camelCase, HTTPServer) and letter/digit boundaries, then lowercased and
// stemmed; English stop words are dropped; runs of CJK characters become overlapping
// character bigrams (a lone character stays a unigram). emit gets each term; joined, when
// set, also gets the concatenation of each identifier's parts ("readfile" for read_file)
// when it has more than one. cjk false leaves CJK runs out (the query parses them itself).
func words(text string, emit func(term string), joined, cjk bool) {
	var (
		parts []string
		run   []rune
	)
	flushIdent := func() {
		if len(parts) == 0 {
			return
		}
		for _, p := range parts {
			if !stopWords[p] {
				emit(stem(p))
			}
		}
		if joined && len(parts) > 1 {
			emit(strings.Join(parts, ""))
		}
		parts = parts[:0]
	}
	flushCJK := func() {
		if cjk {
			cjkTerms(run, emit)
		}
		run = run[:0]
	}
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			flushIdent()
			run = append(run, r)
			i += n
		case r < utf8.RuneSelf && !isAlnumASCII(byte(r)):
			flushIdent()
			flushCJK()
			i += n
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			j := i
			for j < len(text) {
				r2, n2 := utf8.DecodeRuneInString(text[j:])
				if !(unicode.IsLetter(r2) || unicode.IsDigit(r2)) || isCJK(r2) {
					break
				}
				j += n2
			}
			parts = splitCase(text[i:j], parts)
			i = j
			// an identifier continues over '_', '-', '.' and '/' directly followed by a letter or digit
			if i < len(text) && (text[i] == '_' || text[i] == '-' || text[i] == '.' || text[i] == '/') {
				k := i
				for k < len(text) && (text[k] == '_' || text[k] == '-' || text[k] == '.' || text[k] == '/') {
					k++
				}
				if k < len(text) {
					r3, _ := utf8.DecodeRuneInString(text[k:])
					if (unicode.IsLetter(r3) || unicode.IsDigit(r3)) && !isCJK(r3) {
						i = k
						continue
					}
				}
			}
			flushIdent()
		default:
			flushIdent()
			flushCJK()
			i += n
		}
	}
	flushIdent()
	flushCJK()
}

func isAlnumASCII(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// splitCase appends the lowercased parts of one alphanumeric word to parts: "getFileInfo"
// → get, file, info; "HTTPServer" → http, server; letters and digits stay together
// ("base64", "v2").
func splitCase(w string, parts []string) []string {
	if ascii(w) {
		start := 0
		for k := 1; k < len(w); k++ {
			prev, cur := w[k-1], w[k]
			if isLowerASCII(prev) && isUpperASCII(cur) ||
				isUpperASCII(prev) && isUpperASCII(cur) && k+1 < len(w) && isLowerASCII(w[k+1]) {
				parts = append(parts, strings.ToLower(w[start:k]))
				start = k
			}
		}
		return append(parts, strings.ToLower(w[start:]))
	}
	rs := []rune(w)
	start := 0
	for k := 1; k < len(rs); k++ {
		prev, cur := rs[k-1], rs[k]
		if unicode.IsLower(prev) && unicode.IsUpper(cur) ||
			unicode.IsUpper(prev) && unicode.IsUpper(cur) && k+1 < len(rs) && unicode.IsLower(rs[k+1]) {
			parts = append(parts, strings.ToLower(string(rs[start:k])))
			start = k
		}
	}
	return append(parts, strings.ToLower(string(rs[start:])))
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isLowerASCII(b byte) bool { return 'a' <= b && b <= 'z' }
func isUpperASCII(b byte) bool { return 'A' <= b && b <= 'Z' }

// cjkTerms emits the bigrams of a CJK run (a lone character as itself), skipping stop
// bigrams, and the English glossary terms of the words the run contains.
func cjkTerms(run []rune, emit func(string)) {
	switch len(run) {
	case 0:
		return
	case 1:
		if !cjkStopChars[run[0]] {
			emit(string(run))
		}
	default:
		for k := 0; k+1 < len(run); k++ {
			if cjkStopChars[run[k]] || cjkStopChars[run[k+1]] {
				continue
			}
			emit(string(run[k : k+2]))
		}
	}
}

// stem is a light English stemmer: it conflates plurals, -ing, -ed, -ion and a final e, so
// that "creates", "creating", "created", "creation" and "create" meet in "creat". Both
// sides of a match go through it, so only conflation matters, not linguistic accuracy.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILetters(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && len(w) > 5:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) > 4 && !strings.HasSuffix(w, "eed"):
		w = undouble(w[:len(w)-2])
	case (strings.HasSuffix(w, "tion") || strings.HasSuffix(w, "sion")) && len(w) > 6:
		w = w[:len(w)-3]
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops one of a doubled final consonant ("runn" → "run"), except l, s and z.
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
