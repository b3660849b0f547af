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

// tokenizer is [tokenizer.words] with buffers reused from text to text and, for the index, a cache
// of the terms of identifier parts already seen and the glossary terms of CJK runs.
//
// A tokenizer is not safe for concurrent use.
type tokenizer struct {
	// parts are the current identifier's parts as written, text[identStart:identEnd] the
	// identifier.
	parts                []string
	identStart, identEnd int
	// run is the current CJK run, off its characters' byte offsets in the text.
	run []rune
	off []int
	// join caches the joined parts of an identifier as written; nil: no cache.
	join map[string]string
	// emitPart, when set, gets each identifier part as written instead of emit getting its
	// term (see [partTerm]).
	emitPart func(part string)
	// glossary, when set, also emits the glossary terms of every CJK run (see
	// [glossaryTerms]), cjk or not.
	glossary bool
}

// words splits text into the index's terms, in order: identifiers are cut at '_', '-', '.',
// case changes (camelCase, HTTPServer) and letter/digit boundaries, then lowercased and
// stemmed; English stop words are dropped; runs of CJK characters become overlapping
// character bigrams (a lone character stays a unigram). emit gets each term; joined, when
// set, also gets the concatenation of each identifier's parts ("readfile" for read_file)
// when it has more than one. cjk false leaves CJK runs out (the query parses them itself).
func (tk *tokenizer) words(text string, emit func(term string), joined, cjk bool) {
	tk.parts, tk.run, tk.off = tk.parts[:0], tk.run[:0], tk.off[:0]
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r < utf8.RuneSelf && !isAlnumASCII(byte(r)):
			tk.flushIdent(text, emit, joined)
			tk.flushCJK(text, i, emit, cjk)
			i += n
		case isCJK(r):
			tk.flushIdent(text, emit, joined)
			tk.run = append(tk.run, r)
			tk.off = append(tk.off, i)
			i += n
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			tk.flushCJK(text, i, emit, cjk)
			j := i
			for j < len(text) {
				if c := text[j]; c < utf8.RuneSelf {
					if !isAlnumASCII(c) {
						break
					}
					j++
					continue
				}
				r2, n2 := utf8.DecodeRuneInString(text[j:])
				if !(unicode.IsLetter(r2) || unicode.IsDigit(r2)) || isCJK(r2) {
					break
				}
				j += n2
			}
			if len(tk.parts) == 0 {
				tk.identStart = i
			}
			tk.parts = splitCase(text[i:j], tk.parts)
			tk.identEnd = j
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
			tk.flushIdent(text, emit, joined)
		default:
			tk.flushIdent(text, emit, joined)
			tk.flushCJK(text, i, emit, cjk)
			i += n
		}
	}
	tk.flushIdent(text, emit, joined)
	tk.flushCJK(text, len(text), emit, cjk)
}

// flushIdent emits the terms of the identifier gathered so far.
func (tk *tokenizer) flushIdent(text string, emit func(string), joined bool) {
	if len(tk.parts) == 0 {
		return
	}
	for _, p := range tk.parts {
		if tk.emitPart != nil {
			tk.emitPart(p)
		} else if t := partTerm(p); t != "" {
			emit(t)
		}
	}
	if joined && len(tk.parts) > 1 {
		emit(tk.joined(text[tk.identStart:tk.identEnd]))
	}
	tk.parts = tk.parts[:0]
}

// partTerm returns the term of one identifier part as written: lowercased and stemmed, ""
// for a stop word.
func partTerm(part string) string {
	t := strings.ToLower(part)
	if stopWords[t] {
		return ""
	}
	return stem(t)
}

// joined returns the lowercased concatenation of the current identifier's parts.
func (tk *tokenizer) joined(ident string) string {
	if t, ok := tk.join[ident]; ok {
		return t
	}
	t := strings.ToLower(strings.Join(tk.parts, ""))
	if tk.join != nil {
		tk.join[ident] = t
	}
	return t
}

// flushCJK emits the terms of the CJK run gathered so far, which ends at byte end of text.
func (tk *tokenizer) flushCJK(text string, end int, emit func(string), cjk bool) {
	if len(tk.run) == 0 {
		return
	}
	tk.off = append(tk.off, end)
	if cjk {
		cjkTerms(text, tk.run, tk.off, emit)
	}
	if tk.glossary {
		glossaryTerms(text[tk.off[0]:end], emit)
	}
	tk.run, tk.off = tk.run[:0], tk.off[:0]
}

func isAlnumASCII(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// splitCase appends the parts of one alphanumeric word to parts, as written: "getFileInfo"
// → get, File, Info; "HTTPServer" → HTTP, Server; letters and digits stay together
// ("base64", "v2").
func splitCase(w string, parts []string) []string {
	start := 0
	if ascii(w) {
		for k := 1; k < len(w); k++ {
			prev, cur := w[k-1], w[k]
			if isLowerASCII(prev) && isUpperASCII(cur) ||
				isUpperASCII(prev) && isUpperASCII(cur) && k+1 < len(w) && isLowerASCII(w[k+1]) {
				parts = append(parts, w[start:k])
				start = k
			}
		}
		return append(parts, w[start:])
	}
	prev, n := utf8.DecodeRuneInString(w)
	for k := n; k < len(w); {
		cur, cn := utf8.DecodeRuneInString(w[k:])
		split := unicode.IsLower(prev) && unicode.IsUpper(cur)
		if !split && unicode.IsUpper(prev) && unicode.IsUpper(cur) && k+cn < len(w) {
			next, _ := utf8.DecodeRuneInString(w[k+cn:])
			split = unicode.IsLower(next)
		}
		if split {
			parts = append(parts, w[start:k])
			start = k
		}
		prev = cur
		k += cn
	}
	return append(parts, w[start:])
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

// cjkTerms emits the bigrams of a CJK run of text (a lone character as itself), skipping
// stop bigrams: run holds its characters, off their byte offsets and then the run's end.
func cjkTerms(text string, run []rune, off []int, emit func(string)) {
	switch len(run) {
	case 0:
		return
	case 1:
		if !cjkStopChars[run[0]] {
			emit(text[off[0]:off[1]])
		}
	default:
		for k := 0; k+1 < len(run); k++ {
			if cjkStopChars[run[k]] || cjkStopChars[run[k+1]] {
				continue
			}
			emit(text[off[k]:off[k+2]])
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
