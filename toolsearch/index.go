package toolsearch

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cordisgo/harness/internal/suggest"
)

// field is one indexed part of a tool.
type field uint8

const (
	fName    field = iota // the raw name and the public name
	fTitle                // the title
	fPurpose              // the description's first sentence
	fDesc                 // the whole description
	fParams               // parameter names and descriptions
	fServer               // the server's name
	fInstr                // the server's instructions
	nFields
)

// weights are the fields' weights in the BM25F sum, and b their length normalisation.
var (
	weights = [nFields]float64{fName: 3.0, fTitle: 2.0, fPurpose: 1.2, fDesc: 1.0, fParams: 0.5, fServer: 1.6, fInstr: 0.15}
	bField  = [nFields]float64{fName: 0.5, fTitle: 0.5, fPurpose: 0.6, fDesc: 0.75, fParams: 0.75, fServer: 0.3, fInstr: 0.75}
)

const k1 = 1.2

// pairFields are the fields whose words in a row are indexed as pairs ([pairTerm]).
var pairFields = [nFields]bool{fName: true, fTitle: true, fPurpose: true}

// pairTerm is the term of word a followed by word b: a query whose words a and b are in
// a row ("row level security", "user agent") favours the tools that have them so.
func pairTerm(a, b string) string { return a + "\x01" + b }

// Weights of the alternatives a query word brings in: the word itself, a synonym, a
// vocabulary word one or two edits away (a typo), a longer word it begins (a prefix), and
// a word of the glossary of another script.
const (
	wExact   = 1.0
	wSynonym = 0.45
	wTypo    = 0.7
	wPrefix  = 0.45
	wGloss   = 0.8
)

// Weights of what a query's argument values bring in: the kind of value (a path, a URL),
// which tools whose parameters take it match; a word the value hints at (a file's
// extension, a URL's site); a word of a quoted text.
const (
	// wNamed is how much more a tool scores when its name or title has all of the query's
	// words (in proportion to the share it has).
	wNamed = 1.5
	// wPrec is how much more a tool scores when all of its name's words (its server's name
	// left out) are the query's, in proportion to the share that are: of getRoadmaps and
	// getRoadmapById, "show the roadmap" prefers the one whose name says no more.
	wPrec   = 0.25
	wArg    = 1.0
	wHint   = 0.6
	wQuoted = 0.3
	// credInstr is how much a query word found only in a tool's server's instructions counts
	// in the tool's coverage of the query: such words are about the server, not the tool.
	credInstr = 0.25
	// wPair is the weight of two words of the query in a row that a tool has in a row.
	wPair = 0.4
	// wAsk is how much less a tool whose name leads with a changing verb scores for a
	// question ([asksToLook]).
	wAsk = 0.3
	// wVerb is how much less a tool scores whose name leads with a verb of another class
	// ([verbClass]) than the task's leading verb: "cancel the search" against start_search.
	wVerb = 0.2
	// wSub is the weight of the words of a subordinate clause ([splitClauses]), which are
	// optional: they say when or why, not what.
	wSub = 0.5
)

// Index ranks tools for a free-text query. Build it with [New]; it does not change
// afterwards.
//
// An Index is immutable and safe for concurrent use.
type Index struct {
	docs    []doc
	post    map[string][]posting  // the tool fields' terms
	spost   map[string][]sposting // the server fields' terms (fServer, fInstr)
	servers []serverSpan
	lens    [][nFields]float32
	// nameTerms is, per tool, how many distinct words its raw name has besides its
	// server's name
	nameTerms []float32
	// changes is, per tool, whether its name leads with a verb that changes something
	// ([changeVerbs])
	changes []bool
	// verb is, per tool, the class of the verb its name leads with ("" for none; see
	// [verbClass])
	verb  []string
	avg   [nFields]float64
	vocab []string // the terms of words (not of joined identifiers), sorted, for prefix lookups
	// byLen holds the words of the index as written (lowercased, ASCII letters), by length,
	// for typo corrections, and stemOf their terms: a typo is nearer the word as written
	// than its stem ("stauts" is one swap from "status", whose stem is "status", and two
	// edits from its own stem "staut").
	byLen  map[int][]string
	stemOf map[string]string
	names  map[string][]int32 // lowercased raw and public names
	// twin is, for each tool, the first tool of the index with the same raw name and
	// description (itself when none came before): one tool offered by several servers.
	twin []int32
}

// doc is one indexed tool.
type doc struct {
	server  string
	tool    Tool
	purpose string
}

// posting is one tool's term frequencies for one term, per tool field.
type posting struct {
	doc int32
	tf  [fServer]uint16
}

// sposting is one server's term frequencies for one term, in the server fields: they
// count for each of its tools.
type sposting struct {
	server int32
	tf     [nFields - fServer]uint16
}

// serverSpan is the tools of one server: docs[lo:hi].
type serverSpan struct {
	lo, hi int32
}

// termCounts interns the terms of an index being built and gathers one text's term
// frequencies per field, reused from tool to tool.
type termCounts struct {
	ids   map[string]int32
	terms []string     // by id
	post  [][]posting  // by id: the tool fields' postings
	spost [][]sposting // by id: the server fields' postings
	// partIDs caches the term of an identifier part as written (-1: a stop word)
	partIDs map[string]int32
	// pairIDs caches the term of two words in a row (see [pairTerm])
	pairIDs map[[2]int32]int32
	// prev is the current text's last word (-1: none yet, or pairs are not counted)
	prev  int32
	pairs bool
	// the current text's terms: slot[id] is 1 + the term's index in local and tfs (0: absent)
	slot  []int32
	local []int32
	tfs   [][nFields]uint16
	// the current text's fields (f, and g when it differs) and its number of terms
	f, g field
	n    int
	tk   tokenizer
}

func newTermCounts() *termCounts {
	tc := &termCounts{ids: map[string]int32{}, partIDs: map[string]int32{}, pairIDs: map[[2]int32]int32{}}
	tc.tk = tokenizer{join: map[string]string{}, glossary: true,
		emitPart: tc.part}
	return tc
}

func (tc *termCounts) reset() {
	for _, id := range tc.local {
		tc.slot[id] = 0
	}
	tc.local, tc.tfs = tc.local[:0], tc.tfs[:0]
}

// intern returns the id of term t.
func (tc *termCounts) intern(t string) int32 {
	id, ok := tc.ids[t]
	if !ok {
		id = int32(len(tc.terms))
		t = strings.Clone(t) // not a substring keeping a whole text
		tc.ids[t] = id
		tc.terms = append(tc.terms, t)
		tc.post = append(tc.post, nil)
		tc.spost = append(tc.spost, nil)
		tc.slot = append(tc.slot, 0)
	}
	return id
}

// emit counts term t in the current text.
func (tc *termCounts) emit(t string) { tc.count(tc.intern(t)) }

// part counts the term of an identifier part as written in the current text.
func (tc *termCounts) part(raw string) {
	id, ok := tc.partIDs[raw]
	if !ok {
		id = -1
		if t := partTerm(raw); t != "" {
			id = tc.intern(t)
		}
		tc.partIDs[raw] = id
	}
	if id < 0 {
		return
	}
	tc.count(id)
	if tc.pairs {
		if tc.prev >= 0 && tc.prev != id {
			pid, ok := tc.pairIDs[[2]int32{tc.prev, id}]
			if !ok {
				pid = tc.intern(pairTerm(tc.terms[tc.prev], tc.terms[id]))
				tc.pairIDs[[2]int32{tc.prev, id}] = pid
			}
			tc.count(pid)
			tc.n-- // a pair is not a word of the text's length
		}
		tc.prev = id
	}
}

// count counts term id in the current text's fields.
func (tc *termCounts) count(id int32) {
	i := tc.slot[id]
	if i == 0 {
		tc.local = append(tc.local, id)
		tc.tfs = append(tc.tfs, [nFields]uint16{})
		i = int32(len(tc.local))
		tc.slot[id] = i
	}
	tf := &tc.tfs[i-1]
	if tf[tc.f] < math.MaxUint16 {
		tf[tc.f]++
	}
	if tc.g != tc.f && tf[tc.g] < math.MaxUint16 {
		tf[tc.g]++
	}
	tc.n++
}

// text adds the terms of text to field f and returns how many there were. Glossary words
// of CJK runs count as terms of the same field.
func (tc *termCounts) text(f field, text string, joined bool) int {
	return tc.text2(f, f, text, joined)
}

// text2 is text counting each term in two fields (once when f == g).
func (tc *termCounts) text2(f, g field, text string, joined bool) int {
	tc.f, tc.g, tc.n, tc.prev = f, g, 0, -1
	tc.pairs = pairFields[f]
	tc.tk.words(text, tc.emit, joined, true)
	return tc.n
}

// Hit is one search result.
//
// A Hit is a plain value; its schema bytes are shared with the index and must not be
// modified.
type Hit struct {
	// Server is the tool's server ("" for a tool of no server).
	Server string `json:"server"`
	// Name is the tool's name as its server lists it.
	Name string `json:"name"`
	// PublicName is the name the model calls it by.
	PublicName string `json:"publicName"`
	// Purpose is the description's first sentence, on one line, control characters removed.
	Purpose string `json:"purpose,omitempty"`
	// Score is the ranking score: higher is better; comparable within one search only.
	Score float64 `json:"score"`
	// Also names the other servers that offer the same tool (same raw name and description),
	// which the search folds into this hit, in rank order.
	Also []string `json:"also,omitempty"`
	// InputSchema is the tool's schema, set on the first [SearchOptions.Schemas] hits.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// QueryHits are the hits of one query of a search.
type QueryHits struct {
	Query string `json:"query"`
	Hits  []Hit  `json:"tools"`
}

// SearchOptions tune one search. The zero value is valid.
type SearchOptions struct {
	// Limit is the most hits returned (0: 5).
	Limit int
	// Server, when set, keeps only the tools of that server.
	Server string
	// Schemas is how many of the best hits carry their InputSchema (0: none).
	Schemas int
	// Include, when set, keeps only the tools it accepts (for example the deferred ones).
	Include func(server, name string) bool
}

// DefaultLimit is the number of hits of a search whose Limit is 0.
const DefaultLimit = 5

// New indexes the tools of servers. It keeps the tools' strings and schema bytes, not the
// slices. Tools without a name are skipped.
func New(servers []Server) *Index {
	ix := &Index{names: map[string][]int32{}}
	n := 0
	for _, s := range servers {
		n += len(s.Tools)
	}
	ix.docs = make([]doc, 0, n)
	ix.lens = make([][nFields]float32, 0, n)
	tc := newTermCounts()
	var sw schemaWalker
	twins := map[[2]string]int32{}
	for _, s := range servers {
		sid := int32(len(ix.servers))
		serverWords := nameWords(s.Name, nil)
		span := serverSpan{lo: int32(len(ix.docs))}
		tc.reset()
		serverLen := tc.text(fServer, s.Name, true)
		for _, a := range s.Aliases {
			serverLen += tc.text(fServer, a, true)
		}
		instrLen := tc.text(fInstr, s.Instructions, false)
		for i, id := range tc.local {
			var sp sposting
			sp.server = sid
			copy(sp.tf[:], tc.tfs[i][fServer:])
			tc.spost[id] = append(tc.spost[id], sp)
		}
		for _, t := range s.Tools {
			if t.Name == "" {
				continue
			}
			if t.PublicName == "" {
				t.PublicName = t.Name
			}
			id := int32(len(ix.docs))
			purpose := purposeOf("", t.Description)
			ix.docs = append(ix.docs, doc{server: s.Name, tool: t, purpose: purpose})
			key := [2]string{t.Name, t.Description}
			if first, ok := twins[key]; ok {
				ix.twin = append(ix.twin, first)
			} else {
				twins[key] = id
				ix.twin = append(ix.twin, id)
			}
			if purpose == "" {
				ix.docs[id].purpose = purposeOf(t.Title, "")
			}
			tc.reset()
			var l [nFields]float32
			l[fName] = float32(tc.text(fName, t.Name, true))
			ix.nameTerms = append(ix.nameTerms, float32(max(1, len(nameWords(t.Name, serverWords)))))
			lv := leadVerb(t.Name, serverWords)
			ix.changes = append(ix.changes, changeVerbs[lv])
			ix.verb = append(ix.verb, verbClass[lv])
			if t.PublicName != t.Name {
				tc.text(fName, t.PublicName, true)
			}
			l[fTitle] = float32(tc.text(fTitle, t.Title, false))
			// the first sentence is tokenized once, for both fields
			first := firstSentenceEnd(t.Description)
			l[fPurpose] = float32(tc.text2(fPurpose, fDesc, t.Description[:first], false))
			l[fDesc] = l[fPurpose] + float32(tc.text(fDesc, t.Description[first:], false))
			l[fParams] = float32(tc.text(fParams, string(sw.text(t.InputSchema)), true))
			// the kinds of value the parameters take count as terms of the parameter field
			if kinds := paramKindsOf(sw.propNames); kinds != 0 {
				for k := range nArgKinds {
					if kinds&(1<<k) != 0 {
						tc.emit(argTerms[k])
					}
				}
			}
			l[fServer] = float32(serverLen)
			l[fInstr] = float32(instrLen)
			ix.lens = append(ix.lens, l)
			for i, tid := range tc.local {
				p := posting{doc: id}
				copy(p.tf[:], tc.tfs[i][:fServer])
				tc.post[tid] = append(tc.post[tid], p)
			}
			for _, nm := range []string{t.Name, t.PublicName} {
				key := strings.ToLower(nm)
				if !slices.Contains(ix.names[key], id) {
					ix.names[key] = append(ix.names[key], id)
				}
			}
		}
		span.hi = int32(len(ix.docs))
		ix.servers = append(ix.servers, span)
	}
	for f := range nFields {
		var sum float64
		for _, l := range ix.lens {
			sum += float64(l[f])
		}
		if len(ix.lens) > 0 && sum > 0 {
			ix.avg[f] = sum / float64(len(ix.lens))
		} else {
			ix.avg[f] = 1
		}
	}
	ix.post = make(map[string][]posting, len(tc.terms))
	ix.spost = make(map[string][]sposting)
	for id, t := range tc.terms {
		if ps := tc.post[id]; len(ps) > 0 {
			ix.post[t] = ps
		}
		if sps := tc.spost[id]; len(sps) > 0 {
			ix.spost[t] = sps
		}
	}
	ix.byLen, ix.stemOf = map[int][]string{}, map[string]string{}
	for raw, id := range tc.partIDs {
		if id < 0 {
			continue
		}
		w := strings.ToLower(raw)
		if _, ok := ix.stemOf[w]; ok || !isASCIILetters(w) {
			continue
		}
		ix.stemOf[w] = tc.terms[id]
		ix.byLen[len(w)] = append(ix.byLen[len(w)], w)
		ix.vocab = append(ix.vocab, tc.terms[id])
	}
	slices.Sort(ix.vocab)
	ix.vocab = slices.Compact(ix.vocab)
	for _, ws := range ix.byLen {
		slices.Sort(ws) // a deterministic order of corrections
	}
	return ix
}

// nameWords returns the distinct terms of an identifier's parts that are not in except.
func nameWords(name string, except map[string]bool) map[string]bool {
	out := map[string]bool{}
	var parts []string
	for _, f := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		for _, p := range splitCase(f, parts[:0]) {
			if t := partTerm(p); t != "" && !except[t] {
				out[t] = true
			}
		}
	}
	return out
}

// leadVerb returns the first of an identifier's words, except those in except, that is
// one of [changeVerbs] or [lookVerbs] ("" when none is).
func leadVerb(name string, except map[string]bool) string {
	var parts []string
	for _, f := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		for _, p := range splitCase(f, parts[:0]) {
			if t := partTerm(p); !except[t] && (changeVerbs[t] || lookVerbs[t]) {
				return t
			}
		}
	}
	return ""
}

// asksToLook reports whether query is a question ("which tabs are open", 会下雨吗) none of
// whose concepts is a verb that changes something.
func asksToLook(query string, concepts []concept) bool {
	q := strings.TrimSpace(strings.ToLower(query))
	first, _, _ := strings.Cut(q, " ")
	question := questionWords[first] || strings.HasSuffix(q, "?") ||
		slices.ContainsFunc(cjkQuestionMarks, func(m string) bool { return strings.Contains(q, m) })
	if !question {
		return false
	}
	for _, c := range concepts {
		for _, a := range c.alts {
			if a.w >= wGloss && changeVerbs[a.term] {
				return false
			}
		}
	}
	return true
}

// plainWord reports whether w is a word as prose writes it: letters, none upper case but
// the first.
func plainWord(w string) bool {
	for i, r := range w {
		if !unicode.IsLetter(r) || i > 0 && unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// quotedIn reports whether query has w between backquotes or double quotes.
func quotedIn(query, w string) bool {
	for _, q := range []string{"`", "\"", "“"} {
		end := q
		if q == "“" {
			end = "”"
		}
		if strings.Contains(query, q+w+end) {
			return true
		}
	}
	return false
}

// subordinators begin a clause that says when, why or with what words a task is done,
// not what is done: "make a copy of the file before I migrate", "post an update saying
// we're on track".
var subordinators = toSet(`before after because since so saying unless although though whereas while`)

// splitClauses returns text's main clauses and its subordinate ones: each from a
// subordinator to the end of its sentence.
func splitClauses(text string) (main, sub string) {
	var m, s strings.Builder
	in := false
	for _, w := range strings.Fields(text) {
		if !in && subordinators[strings.ToLower(strings.Trim(w, ",;:"))] {
			in = true
		}
		b := &m
		if in {
			b = &s
		}
		b.WriteString(w)
		b.WriteByte(' ')
		if strings.ContainsAny(w[len(w)-1:], ".;!?") {
			in = false
		}
	}
	return m.String(), s.String()
}

// known reports whether term is indexed in any field.
func (ix *Index) known(term string) bool {
	if _, ok := ix.post[term]; ok {
		return true
	}
	_, ok := ix.spost[term]
	return ok
}

// df is the number of tools whose fields have term.
func (ix *Index) df(term string) int {
	sps := ix.spost[term]
	n := 0
	for _, sp := range sps {
		n += int(ix.servers[sp.server].hi - ix.servers[sp.server].lo)
	}
	for _, p := range ix.post[term] {
		if !slices.ContainsFunc(sps, func(sp sposting) bool {
			return ix.servers[sp.server].lo <= p.doc && p.doc < ix.servers[sp.server].hi
		}) {
			n++
		}
	}
	return n
}

// eachCJKRun calls fn with every maximal run of CJK characters in text.
func eachCJKRun(text string, fn func(string)) {
	start := -1
	for i, r := range text {
		if r >= 0x0E00 && isCJK(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			fn(text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// Len returns the number of indexed tools.
func (ix *Index) Len() int { return len(ix.docs) }

// alt is one way a query word may match: an indexed term and its weight.
type alt struct {
	term string
	w    float64
}

// concept is one word of the query with its alternatives.
type concept struct {
	alts []alt
	// shared, when set, moves every alternative's IDF halfway to the lowest of them: a CJK
	// bigram and its glossary word are one word in two scripts, and the script that is
	// rarer in the fleet must not decide the ranking alone.
	shared bool
	// optional concepts add to a tool's score when matched but are not counted in the
	// query's coverage: the words of argument values.
	optional bool
}

// parse turns a query into concepts: one per distinct word of the topic (the query
// without its argument values, see [scanArgs]), with its synonyms, typo corrections and
// prefix completions that occur in the index; one per bigram of a CJK run, with the
// English words of the glossary words that begin there; one per kind of argument value
// found (a path, a URL, …), which the tools that take such a value match; and optional
// ones for the words the values carry (a quoted text's, a file's extension). Concepts of
// which nothing is indexed are left out. verb is the class of the task's leading verb
// ([verbClass]): the first of its first two words that is a verb ("list all pods", "help
// me find …"), "" when neither is.
func (ix *Index) parse(query string) (out []concept, verb string) {
	qa := scanArgs(query, func(s string) bool { _, ok := ix.names[s]; return ok })
	seen := map[string]bool{}
	add := func(text string, w float64, optional bool) {
		var terms, raws, seq []string
		term := func(t, raw string) {
			seq = append(seq, t)
			if !seen[t] {
				seen[t] = true
				terms, raws = append(terms, t), append(raws, raw)
			}
		}
		var tk tokenizer
		tk.emitPart = func(raw string) {
			if t := partTerm(raw); t != "" {
				term(t, strings.ToLower(raw))
			}
		}
		tk.words(text, func(t string) { term(t, t) }, true, false)
		for i, t := range terms {
			if i < 2 && w == 1 && !optional && verb == "" {
				verb = verbClass[t]
			}
			if c := ix.wordConcept(t, raws[i]); len(c.alts) > 0 {
				for i := range c.alts {
					c.alts[i].w *= w
				}
				c.optional = optional
				out = append(out, c)
			}
		}
		// words in a row: optional concepts matched by the tools that have them so
		for i := 1; i < len(seq); i++ {
			if p := pairTerm(seq[i-1], seq[i]); seq[i-1] != seq[i] && !seen[p] && ix.known(p) {
				seen[p] = true
				out = append(out, concept{alts: []alt{{p, wPair * w}}, optional: true})
			}
		}
	}
	main, sub := splitClauses(qa.rest)
	add(main, 1, false)
	add(sub, wSub, true)
	for _, h := range qa.hints {
		add(h, wHint, true)
	}
	for _, q := range qa.quoted {
		add(q, wQuoted, true)
	}
	var kindsSeen [nArgKinds]bool
	for _, kinds := range qa.kinds {
		var c concept
		for _, k := range kinds {
			if !kindsSeen[k] && ix.known(argTerms[k]) {
				c.alts = append(c.alts, alt{argTerms[k], wArg})
			}
		}
		for _, k := range kinds {
			kindsSeen[k] = true
		}
		if len(c.alts) > 0 {
			out = append(out, c)
		}
	}
	query = qa.rest
	eachCJKRun(query, func(run string) {
		rs := []rune(run)
		inWord := 0 // the characters left of the glossary word matched last
		for k := range rs {
			var c concept
			if k+1 < len(rs) || len(rs) == 1 {
				g := string(rs[k:min(k+2, len(rs))])
				if ix.known(g) && !seen[g] && !cjkStopChars[rs[k]] && (len(g) == len(string(rs[k])) || !cjkStopChars[rs[k+1]]) {
					c.alts = append(c.alts, alt{g, wExact})
				}
				seen[g] = true
			}
			// the longest glossary word that begins here, unless inside the last one
			var best *glossaryEntry
			if inWord > 0 {
				inWord--
			} else {
				rest := string(rs[k:])
				for _, e := range glossaryByRune[rs[k]] {
					g := &glossaryEntries[e]
					if strings.HasPrefix(rest, g.word) && (best == nil || len(g.word) > len(best.word)) {
						best = g
					}
				}
			}
			if best != nil {
				inWord = utf8.RuneCountInString(best.word) - 1
				for i, w := range best.phrase {
					if !seen["\x00"+w] && ix.known(w) {
						seen["\x00"+w] = true
						out = append(out, concept{alts: []alt{{w, wGloss}}})
					}
					if i > 0 {
						if p := pairTerm(best.phrase[i-1], w); !seen[p] && ix.known(p) {
							seen[p] = true
							out = append(out, concept{alts: []alt{{p, wPair * wGloss}}, optional: true})
						}
					}
				}
				for _, w := range best.alts {
					if seen["\x00"+w] {
						continue
					}
					seen["\x00"+w] = true
					if ix.known(w) {
						c.alts = append(c.alts, alt{w, wGloss})
					}
					for _, s := range synonyms[w] {
						if ix.known(s) {
							c.alts = append(c.alts, alt{s, wGloss * wSynonym})
						}
					}
				}
			}
			if len(c.alts) > 0 {
				c.shared = len(c.alts) > 1
				out = append(out, c)
			}
		}
	})
	return out, verb
}

// wordConcept returns the concept of one query word: the word itself when indexed, its
// synonyms, its typo corrections when it is not indexed, and the longer words it begins.
func (ix *Index) wordConcept(t, raw string) concept {
	c := concept{alts: []alt{{t, wExact}}}
	known := ix.known(t)
	if !known {
		c.alts = c.alts[:0]
	}
	for _, s := range synonyms[t] {
		if ix.known(s) {
			c.alts = append(c.alts, alt{s, wSynonym})
		}
	}
	if !known && isASCIILetters(raw) && len(raw) >= 4 {
		for _, v := range ix.near(raw) {
			c.alts = append(c.alts, v)
			for _, s := range synonyms[v.term] {
				if ix.known(s) {
					c.alts = append(c.alts, alt{s, v.w * wSynonym})
				}
			}
		}
	}
	if len(t) >= 3 && isASCIILetters(t) {
		for _, v := range ix.prefixed(t, 8) {
			c.alts = append(c.alts, alt{v, wPrefix})
		}
	}
	return c
}

// prefixed returns up to max indexed terms that begin with p and are longer than it.
func (ix *Index) prefixed(p string, max int) []string {
	i, _ := slices.BinarySearch(ix.vocab, p)
	var out []string
	for ; i < len(ix.vocab) && strings.HasPrefix(ix.vocab[i], p) && len(out) < max; i++ {
		if len(ix.vocab[i]) > len(p) {
			out = append(out, ix.vocab[i])
		}
	}
	return out
}

// near returns the terms of the indexed words nearest w, a word as written, within one edit
// (two for words of eight letters or more), an edit being an insertion, deletion,
// substitution or swap of neighbours; each with its weight as a correction: wTypo for the
// most frequent of them, less for rarer ones (a typo is more likely of a common word).
func (ix *Index) near(w string) []alt {
	maxd := 1
	if len(w) >= 8 {
		maxd = 2
	}
	best := 2*maxd + 1
	var out []alt
	for l := len(w) - maxd; l <= len(w)+maxd; l++ {
		for _, v := range ix.byLen[l] {
			if v[0] != w[0] && (len(v) < 2 || len(w) < 2 || v[1] != w[1]) {
				continue // typos rarely change the first letters
			}
			d := suggest.Distance(w, v) // in half edits
			if d > best {
				continue
			}
			if d < best {
				best, out = d, out[:0]
			}
			t := ix.stemOf[v]
			if !slices.ContainsFunc(out, func(a alt) bool { return a.term == t }) {
				out = append(out, alt{t, float64(ix.df(t))})
			}
		}
	}
	most := 0.0
	for _, a := range out {
		most = max(most, a.w)
	}
	for i := range out {
		out[i].w = wTypo * math.Sqrt(out[i].w/most)
	}
	return out
}

// idf is a term's inverse document frequency (BM25's, never negative).
func (ix *Index) idf(term string) float64 {
	df := float64(ix.df(term))
	return math.Log(1 + (float64(len(ix.docs))-df+0.5)/(df+0.5))
}

// Search returns the tools that best match query, best first. An empty query, or one with
// no indexed word, returns no hits.
func (ix *Index) Search(query string, o SearchOptions) []Hit {
	return ix.hits(ix.ranked(query, o), o)
}

// scored is a tool of the index and its score.
type scored struct {
	doc   int32
	score float64
}

// ranked returns every tool that matches query and passes o's filters, best first.
func (ix *Index) ranked(query string, o SearchOptions) []scored {
	concepts, qverb := ix.parse(query)
	if len(concepts) == 0 {
		return nil
	}
	n := len(ix.docs)
	total := make([]float64, n)
	covered := make([]float64, n)
	best := make([]float64, n)
	tfw := make([]float64, n)
	cred := make([]float64, n)     // the current concept's best field credit (see credInstr)
	named := make([]float64, n)    // concepts matched in the tool's name or title
	nameHits := make([]float64, n) // how many concepts, unweighted
	bestName := make([]float64, n) // the current concept's best such match
	var touched, tfTouched, nameTouched []int32
	var nconcepts float64
	for _, c := range concepts {
		if !c.optional {
			nconcepts++
		}
		touched = touched[:0]
		sharedIDF := math.Inf(1)
		if c.shared {
			for _, a := range c.alts {
				sharedIDF = min(sharedIDF, ix.idf(a.term))
			}
		}
		for _, a := range c.alts {
			idf := ix.idf(a.term)
			if c.shared {
				idf = (idf + sharedIDF) / 2
			}
			tfTouched = tfTouched[:0]
			for _, sp := range ix.spost[a.term] {
				span := ix.servers[sp.server]
				for d := span.lo; d < span.hi; d++ {
					l := &ix.lens[d]
					var w float64
					for k, tf := range sp.tf {
						if tf == 0 {
							continue
						}
						f := fServer + field(k)
						w += weights[f] * float64(tf) / (1 - bField[f] + bField[f]*float64(l[f])/ix.avg[f])
					}
					if tfw[d] == 0 {
						tfTouched = append(tfTouched, d)
					}
					tfw[d] += w
					cr := credInstr
					if sp.tf[0] > 0 {
						cr = 1
					}
					cred[d] = max(cred[d], cr)
				}
			}
			for _, p := range ix.post[a.term] {
				l := &ix.lens[p.doc]
				if (p.tf[fName] > 0 || p.tf[fTitle] > 0) && a.w > bestName[p.doc] {
					if bestName[p.doc] == 0 {
						nameTouched = append(nameTouched, p.doc)
					}
					bestName[p.doc] = a.w
				}
				var w float64
				for f, tf := range p.tf {
					if tf == 0 {
						continue
					}
					w += weights[f] * float64(tf) / (1 - bField[f] + bField[f]*float64(l[f])/ix.avg[f])
				}
				if tfw[p.doc] == 0 {
					tfTouched = append(tfTouched, p.doc)
				}
				tfw[p.doc] += w
				cred[p.doc] = 1
			}
			for _, d := range tfTouched {
				w := tfw[d]
				tfw[d] = 0
				sc := a.w * idf * w * (k1 + 1) / (k1 + w)
				if best[d] == 0 {
					touched = append(touched, d)
				}
				if sc > best[d] {
					best[d] = sc
				}
			}
		}
		for _, d := range touched {
			total[d] += best[d]
			if !c.optional {
				covered[d] += cred[d]
			}
			best[d], cred[d] = 0, 0
		}
		for _, d := range nameTouched {
			if !c.optional {
				named[d] += min(1, bestName[d])
				nameHits[d]++
			}
			bestName[d] = 0
		}
		nameTouched = nameTouched[:0]
	}
	// exact names in the query: "mcp__github__create_issue", "read_text_file", "getIssue",
	// "`find`"; not a plain word outside quotes ("find the emails" does not name a tool
	// called find)
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return r == ' ' || r == '`' || r == '"' || r == '\'' || r == ',' || r == '(' || r == ')'
	}) {
		if plainWord(w) && !quotedIn(query, w) {
			continue
		}
		for _, d := range ix.names[strings.ToLower(w)] {
			total[d] += 8
		}
	}
	look := asksToLook(query, concepts)
	var cands []scored
	for d := range n {
		if total[d] == 0 {
			continue
		}
		dc := &ix.docs[d]
		if o.Server != "" && dc.server != o.Server {
			continue
		}
		if o.Include != nil && !o.Include(dc.server, dc.tool.Name) {
			continue
		}
		cov, ncov := 1.0, 0.0
		if nconcepts > 0 {
			cov, ncov = covered[d]/nconcepts, named[d]/nconcepts
		}
		prec := min(1, nameHits[d]/float64(ix.nameTerms[d]))
		sc := total[d] * (0.5 + 0.5*cov*cov) * (1 + wNamed*ncov) * (1 + wPrec*prec)
		if look && ix.changes[d] {
			sc *= 1 - wAsk
		}
		if qverb != "" && ix.verb[d] != "" && ix.verb[d] != qverb {
			sc *= 1 - wVerb
		}
		cands = append(cands, scored{int32(d), sc})
	}
	slices.SortFunc(cands, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	return cands
}

// hits turns ranked tools into at most o.Limit hits, one per tool: the twins of a tool
// already ranked fold into its hit.
func (ix *Index) hits(cands []scored, o SearchOptions) []Hit {
	if len(cands) == 0 {
		return nil
	}
	limit := o.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	hits := make([]Hit, 0, min(limit, len(cands)))
	at := map[int32]int{} // twin group → its hit
	for _, c := range cands {
		g := ix.twin[c.doc]
		dc := &ix.docs[c.doc]
		if i, ok := at[g]; ok {
			hits[i].Also = append(hits[i].Also, dc.server)
			continue
		}
		if len(hits) == limit {
			continue // only twins of the hits can still fold in
		}
		at[g] = len(hits)
		h := Hit{Server: dc.server, Name: dc.tool.Name, PublicName: dc.tool.PublicName, Purpose: dc.purpose,
			Score: math.Round(c.score*1000) / 1000}
		if len(hits) < o.Schemas {
			h.InputSchema = dc.tool.InputSchema
		}
		hits = append(hits, h)
	}
	return hits
}
