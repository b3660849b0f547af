package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// argKind is a kind of value a task may carry as an argument — a path, a URL, an e-mail
// address — and a tool may take as a parameter.
type argKind uint8

const (
	argPath    argKind = iota // ./docs, /etc/hosts, C:\tmp, report.pdf
	argURL                    // https://…, www.…, example.com/…
	argEmail                  // someone@example.com
	argRepo                   // owner/name
	argIssue                  // PROJ-123, #123
	argID                     // commit hashes, UUIDs
	argDate                   // 2026-12-04, 12/04/2026
	argHost                   // 10.0.0.12, 10.0.0.12:22
	argUser                   // @alice
	argChannel                // #general
	argCommand                // `npm test`, ls -la /etc
	nArgKinds
)

// argTerms are the index terms of the kinds: a tool whose parameters take a kind has its
// term in the parameter field. They cannot come out of any text ('\x01' is never a word
// character).
var argTerms = [nArgKinds]string{"\x01path", "\x01url", "\x01email", "\x01repo", "\x01issue", "\x01id", "\x01date", "\x01host", "\x01user", "\x01channel", "\x01command"}

// paramKinds maps a part of a parameter's name (as [tokenizer.words] cuts identifiers, unstemmed,
// lowercased) to the kinds of value it takes.
var paramKinds = func() map[string][]argKind {
	m := map[string][]argKind{}
	add := func(k argKind, names string) {
		for _, n := range strings.Fields(names) {
			m[n] = append(m[n], k)
		}
	}
	add(argPath, "path paths file files filename filenames filepath dir dirs directory directories folder folders src source dest destination cwd workdir")
	add(argURL, "url urls uri uris link links href endpoint website websites domain site")
	add(argEmail, "email emails mail to recipient recipients cc bcc sender from")
	add(argRepo, "owner repo repos repository repositories namespace project")
	add(argIssue, "issue issues ticket tickets iid pull pr")
	add(argID, "id ids sha commit ref hash uuid revision")
	add(argDate, "date dates time datetime timestamp since until start end due deadline day")
	add(argHost, "host hostname hosts ip server")
	add(argUser, "user username users assignee assignees member members mention login handle")
	add(argChannel, "channel channels room chat")
	add(argCommand, "command commands cmd script shell code")
	return m
}()

// paramKindsOf returns the kinds of value a tool's parameters take, from their names, as a
// bit set.
func paramKindsOf(names func(yield func(name []byte))) uint16 {
	var set uint16
	var parts []string
	names(func(name []byte) {
		parts = splitCase(string(name), parts[:0])
		for _, p := range parts {
			for _, sub := range strings.FieldsFunc(p, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
				for _, k := range paramKinds[strings.ToLower(sub)] {
					set |= 1 << k
				}
			}
		}
	})
	return set
}

// queryArgs is what [scanArgs] found in a query.
type queryArgs struct {
	// rest is the query with the argument values blanked out: its words are the topic.
	rest string
	// kinds are the kinds of the values found; each entry is one value's kinds (an
	// owner/name may be a repository or a path).
	kinds [][]argKind
	// hints are words the values carry that may still name what to do: a file's extension
	// ("pdf"), a URL's site ("youtube").
	hints []string
	// quoted are the texts in quotes, which are usually values ("search for 'red shoes'")
	// and weigh little.
	quoted []string
}

// fileExts are the extensions that make a word a file name.
var fileExts = toSet(`txt md markdown rst pdf doc docx odt rtf xls xlsx ods csv tsv json jsonl ndjson yaml yml xml toml ini
conf cfg env log html htm css scss js mjs cjs ts tsx jsx vue go py rb rs java kt swift c h cc cpp hpp cs php sh bash zsh
ps1 sql proto graphql png jpg jpeg gif svg webp bmp ico tif tiff heic mp3 wav flac ogg m4a mp4 mov avi mkv webm zip tar gz
tgz bz2 xz 7z rar jar war apk ipa dmg iso ipynb ppt pptx key epub mobi drawio mmd excalidraw sqlite db parquet avro pem crt`)

// topLevelDomains are the endings that make a dotted word a host name.
var topLevelDomains = toSet(`com org net io dev ai app co cn gov edu me info xyz tech site so sh uk de jp fr ru in br us ca au
cloud page pages run tv fm ly gg`)

// shellCommands are the commands whose name, followed by a flag or quoted, makes a text a
// command line.
var shellCommands = toSet(`ls cat grep rg find cd pwd mkdir rm cp mv chmod chown tail head less curl wget ssh scp rsync tar
unzip zip docker podman kubectl helm git npm npx yarn pnpm bun deno node python python3 pip pip3 go cargo rustc make cmake
gcc java mvn gradle terraform ansible systemctl journalctl ps top kill df du free uname echo sed awk sort uniq wc which
brew apt apt-get dnf yum ping dig nslookup openssl psql mysql redis-cli mongosh sqlite3 ffmpeg`)

// dateWords are words that name a day or a time ("tomorrow", "friday", "3pm"), and
// dateUnits the units that "last", "next", "this" and "past" make into one ("last month").
var (
	dateWords = toSet(`today tomorrow yesterday tonight monday tuesday wednesday thursday friday saturday sunday
january february april june july august september october november december noon midnight
今天 明天 昨天 今晚 后天 前天 周一 周二 周三 周四 周五 周六 周日 星期一 星期二 星期三 星期四 星期五 星期六 星期天 上午 下午 晚上`)
	dateUnits  = toSet(`week weeks month months year years quarter weekend night morning hour hours day days`)
	dateShifts = toSet(`last next this past previous coming`)
)

// isClock reports whether s is a time of day: 3pm, 10:30, 14:05, 9am.
func isClock(s string) bool {
	s = strings.ToLower(s)
	if t, ok := strings.CutSuffix(s, "pm"); ok {
		s = t
	} else if t, ok := strings.CutSuffix(s, "am"); ok {
		s = t
	} else if !strings.Contains(s, ":") {
		return false
	}
	h, m, _ := strings.Cut(s, ":")
	return allDigits(h) && len(h) <= 2 && (m == "" || allDigits(m) && len(m) == 2)
}

// negations are the words whose next word the task says not to do.
var negations = toSet(`don't dont never without 不要 别 不用`)

// namers are the words after which a name follows ("a folder called backup"): the name is
// a value, not a word of the topic.
var namers = toSet(`called named titled labelled labeled 叫 叫做 名为 命名为 名叫 标题为`)

// quotePairs are the quotation marks whose contents are a value.
var quotePairs = []struct{ open, close string }{
	{`"`, `"`}, {"“", "”"}, {"‘", "’"}, {"「", "」"}, {"『", "』"}, {"«", "»"}, {"`", "`"}, {"'", "'"},
}

// scanArgs finds the argument values of a query — quoted texts, URLs, e-mail addresses,
// paths and file names, repositories, issue keys, hashes, dates, hosts, @users and
// #channels — and returns them apart from the words of the topic. isName reports whether
// a text is a tool's name: a quoted tool name stays in the topic.
func scanArgs(q string, isName func(string) bool) queryArgs {
	var a queryArgs
	var b strings.Builder
	b.Grow(len(q))
	// quoted texts first: their contents are values, and may hold paths or URLs
	rest := q
	for len(rest) > 0 {
		i, pair := firstQuote(rest)
		if i < 0 {
			b.WriteString(rest)
			break
		}
		body := rest[i+len(pair.open):]
		j := strings.Index(body, pair.close)
		if j <= 0 || (pair.open == "'" && !quoteEnds(body, j)) {
			b.WriteString(rest[:i+len(pair.open)])
			rest = body
			continue
		}
		inner := body[:j]
		b.WriteString(rest[:i])
		if first, _, _ := strings.Cut(strings.TrimSpace(inner), " "); pair.open == "`" && shellCommands[first] {
			a.kinds = append(a.kinds, []argKind{argCommand})
			b.WriteByte(' ')
		} else if isName(strings.ToLower(strings.TrimSpace(inner))) {
			b.WriteString(" " + inner + " ")
		} else {
			b.WriteByte(' ')
			if words := a.scanTokens(inner); strings.TrimSpace(words) != "" {
				a.quoted = append(a.quoted, words)
			}
		}
		rest = body[j+len(pair.close):]
	}
	a.rest = a.scanTokens(b.String())
	return a
}

// firstQuote returns the offset of the first opening quotation mark of q and its pair (-1
// when there is none). A "'" opens a quote only at the start of a word ("don't" has none).
func firstQuote(q string) (int, struct{ open, close string }) {
	best, bp := -1, quotePairs[0]
	for _, p := range quotePairs {
		from := 0
		for {
			i := strings.Index(q[from:], p.open)
			if i < 0 {
				break
			}
			i += from
			if p.open == "'" && i > 0 {
				r, _ := utf8.DecodeLastRuneInString(q[:i])
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					from = i + 1
					continue
				}
			}
			if best < 0 || i < best {
				best, bp = i, p
			}
			break
		}
	}
	return best, bp
}

// quoteEnds reports whether the "'" at body[j] closes a quote: it is not inside a word.
func quoteEnds(body string, j int) bool {
	if j+1 >= len(body) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(body[j+1:])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// scanTokens classifies the space-separated tokens of text, records the argument values it
// finds in a, and returns text with them blanked out.
func (a *queryArgs) scanTokens(text string) string {
	fields := strings.Fields(spaceCJK(text))
	kept := make([]string, 0, len(fields))
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		// a command line: a command, then flags (and whatever follows them)
		if shellCommands[f] && i+1 < len(fields) && strings.HasPrefix(fields[i+1], "-") {
			a.kinds = append(a.kinds, []argKind{argCommand})
			for i+1 < len(fields) && strings.HasPrefix(fields[i+1], "-") {
				i++
			}
			continue
		}
		// what the task says not to do: "don't send it", "without rewriting"
		if i > 0 && (negations[strings.ToLower(fields[i-1])] || i > 1 && strings.EqualFold(fields[i-2]+" "+fields[i-1], "do not")) {
			continue
		}
		// a name after "called", "named", 叫
		if i > 0 && isNamer(fields[i-1]) {
			a.quoted = append(a.quoted, f)
			continue
		}
		// days and times: "tomorrow", "on friday at 3pm", "last month"
		lw := strings.ToLower(strings.TrimRight(f, ",.?!"))
		if dateWords[lw] || isClock(lw) {
			a.kinds = append(a.kinds, []argKind{argDate})
			continue
		}
		if dateShifts[lw] && i+1 < len(fields) && dateUnits[strings.ToLower(strings.TrimRight(fields[i+1], ",.?!"))] {
			a.kinds = append(a.kinds, []argKind{argDate})
			i++
			continue
		}
		tok := strings.TrimFunc(f, func(r rune) bool {
			return strings.ContainsRune(`,;:!?()[]{}<>"'*`, r) || r == '。' || r == '，' || r == '、' || r == '；' || r == '：' || r == '（' || r == '）' || r == '？' || r == '！'
		})
		tok = strings.TrimRight(tok, ".")
		kinds, hint := classify(tok)
		if kinds == nil {
			kept = append(kept, f)
			continue
		}
		a.kinds = append(a.kinds, kinds)
		if hint != "" {
			a.hints = append(a.hints, hint)
		}
	}
	return strings.Join(kept, " ")
}

// isNamer reports whether a word is, or a CJK run ends with, a word after which a name
// follows.
func isNamer(w string) bool {
	w = strings.ToLower(w)
	if namers[w] {
		return true
	}
	for n := range namers {
		if n[0] >= utf8.RuneSelf && strings.HasSuffix(w, n) {
			return true
		}
	}
	return false
}

// spaceCJK puts spaces between runs of CJK characters (and CJK punctuation) and other
// text, so that a path or URL written against Chinese words is a token of its own.
func spaceCJK(text string) string {
	var b strings.Builder
	prev := 0 // 0: start, 1: CJK, 2: other
	for _, r := range text {
		cur := 2
		if r >= 0x3000 && (isCJK(r) || r < 0x3040 || r >= 0xFF00 && r <= 0xFF65) {
			cur = 1
		}
		if prev != 0 && cur != prev {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		prev = cur
	}
	return b.String()
}

// classify returns the kinds of an argument value and a word it hints at, or nil when tok
// is an ordinary word.
func classify(tok string) ([]argKind, string) {
	if len(tok) < 2 {
		return nil, ""
	}
	lower := strings.ToLower(tok)
	switch {
	case strings.Contains(lower, "://") || strings.HasPrefix(lower, "www."):
		return []argKind{argURL}, siteOf(lower)
	case strings.Count(tok, "@") == 1 && tok[0] != '@' && strings.Contains(tok[strings.IndexByte(tok, '@'):], "."):
		return []argKind{argEmail}, ""
	case tok[0] == '@' && isIdent(tok[1:]):
		return []argKind{argUser}, ""
	case tok[0] == '#' && len(tok) > 1 && allDigits(tok[1:]):
		return []argKind{argIssue}, ""
	case tok[0] == '#' && isIdent(tok[1:]):
		return []argKind{argChannel}, ""
	case isIssueKey(tok):
		return []argKind{argIssue}, ""
	case isIPv4(tok):
		return []argKind{argHost}, ""
	case isDate(tok):
		return []argKind{argDate}, ""
	case isHash(lower):
		return []argKind{argID}, ""
	}
	if strings.HasPrefix(tok, "/") || strings.HasPrefix(tok, "./") || strings.HasPrefix(tok, "../") ||
		strings.HasPrefix(tok, "~/") || strings.HasPrefix(tok, "~\\") || strings.HasPrefix(tok, ".\\") ||
		len(tok) > 2 && tok[1] == ':' && (tok[2] == '\\' || tok[2] == '/') && unicode.IsLetter(rune(tok[0])) {
		return []argKind{argPath}, extOf(lower)
	}
	if host, _, _ := strings.Cut(lower, "/"); strings.Contains(host, ".") {
		if tld := host[strings.LastIndexByte(host, '.')+1:]; topLevelDomains[tld] && !fileExts[tld] && !strings.Contains(lower, "\\") {
			return []argKind{argURL}, siteOf(lower)
		}
	}
	if ext := extOf(lower); ext != "" {
		return []argKind{argPath}, ext
	}
	if strings.ContainsAny(tok, "/\\") {
		parts := strings.FieldsFunc(tok, func(r rune) bool { return r == '/' || r == '\\' })
		if len(parts) == 2 && strings.Count(tok, "/") == 1 && !strings.ContainsRune(tok, '\\') {
			if strings.ToUpper(tok) == tok {
				return nil, "" // a pair such as BTC/USDT or TCP/IP
			}
			return []argKind{argRepo, argPath}, ""
		}
		if len(parts) >= 2 {
			return []argKind{argPath}, ""
		}
	}
	return nil, ""
}

// extOf returns the file extension of a lowercased path or file name when it is a known
// one ("" otherwise).
func extOf(p string) string {
	base := p[strings.LastIndexAny(p, "/\\")+1:]
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || i == len(base)-1 {
		return ""
	}
	if ext := base[i+1:]; fileExts[ext] {
		return ext
	}
	return ""
}

// siteOf returns the name of a URL's site: "youtube" for https://www.youtube.com/watch?v=….
func siteOf(u string) string {
	if _, after, ok := strings.Cut(u, "://"); ok {
		u = after
	}
	host, _, _ := strings.Cut(u, "/")
	host, _, _ = strings.Cut(host, "?")
	host, _, _ = strings.Cut(host, ":")
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return ""
	}
	name := labels[len(labels)-2]
	if len(labels) >= 3 && (name == "co" || name == "com" || name == "org" || name == "net") {
		name = labels[len(labels)-3]
	}
	if name == "example" || name == "localhost" || allDigits(name) {
		return ""
	}
	return name
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isIssueKey reports whether s is a tracker key such as PROJ-123.
func isIssueKey(s string) bool {
	i := strings.IndexByte(s, '-')
	if i < 2 || !allDigits(s[i+1:]) {
		return false
	}
	for k := 0; k < i; k++ {
		if c := s[k]; !(c >= 'A' && c <= 'Z' || k > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isIPv4 reports whether s is a dotted IPv4 address, with a port or not.
func isIPv4(s string) bool {
	s, _, _ = strings.Cut(s, ":")
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if !allDigits(p) || len(p) > 3 {
			return false
		}
	}
	return true
}

// isDate reports whether s is a date written with digits: 2026-12-04 (a time may follow),
// 12/04/2026, 2026/12/04.
func isDate(s string) bool {
	d, _, _ := strings.Cut(s, "T")
	for _, sep := range []string{"-", "/", "."} {
		parts := strings.Split(d, sep)
		if len(parts) != 3 {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && allDigits(p) && len(p) <= 4
		}
		if ok && (len(parts[0]) == 4 || len(parts[2]) == 4) {
			return true
		}
	}
	return false
}

// isHash reports whether a lowercased s is a hex hash (7 to 64 hex digits, letters and
// digits both) or a UUID.
func isHash(s string) bool {
	if len(s) == 36 && strings.Count(s, "-") == 4 {
		s = strings.ReplaceAll(s, "-", "")
	}
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	letters, digits := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c >= 'a' && c <= 'f':
			letters = true
		default:
			return false
		}
	}
	return letters && digits
}
