package search

import (
	"unicode"
	"unicode/utf8"
)

// Limits of Analyze, in bytes.
const (
	// MaxWordBytes is the longest word indexed, measured in the analyzed
	// text; a longer run of letters and digits (base64, hex dumps) is
	// dropped, though it still takes a position so that no phrase
	// matches across it.
	MaxWordBytes = 48
	// MaxAddressBytes is the longest e-mail address indexed whole; a
	// longer one is indexed by its parts only.
	MaxAddressBytes = 96
	// MaxTermBytes bounds every Term and Word Analyze emits.
	MaxTermBytes = 2 * MaxAddressBytes
	// maxRuns is how many joined runs one compound holds; the next run
	// starts a new compound.
	maxRuns = 64
	// maxJoined is how many hyphenated words are also indexed joined.
	maxJoined = 4
)

// Analyze turns text into tokens, calling emit for each in order: Pos and
// Start never decrease, Start < End, and Term and Word are never empty.
//
// Words are runs of letters, digits and marks, folded (see fold.go) and,
// when they are English-looking (ASCII letters only), stemmed for Term.
// Runs joined by one character of . - _ ' @ + are read together:
//   - an e-mail address gives the whole address (not stemmed) and then
//     its parts; the whole shares the position of its first part, so a
//     phrase over the parts still matches;
//   - a hyphenated word of 2 to 4 parts ("e-mail") and an acronym
//     ("U.S.A.") give the joined word ("email", "usa") at the position
//     of their first part, then the parts;
//   - an apostrophe joins ("don't" is "dont"; a possessive 's is
//     dropped);
//   - digits joined by '.' are one number ("3.14", "192.168.0.1"), and a
//     ',' followed by three digits is a thousands separator ("1,000" is
//     "1000");
//   - a one- or two-letter word followed by "++" or "#" keeps them
//     ("c++", "c#");
//   - anything else splits: "report_v2.pdf" is report, v2, pdf.
//
// Chinese, Japanese and Korean runs give overlapping bigrams, one per
// position; a lone character is a unigram.
//
// Term and Word may share memory with text: a caller keeping them beyond
// text's lifetime copies them (strings.Clone).
func Analyze(text string, emit func(Token)) {
	a := analyzer{text: text, emit: emit}
	a.run()
}

// analyzeLang is Analyze for a text in lang: the words of lang's alphabet
// are stemmed by lang's stemmer (lang.go), the others as Analyze does.
func analyzeLang(text string, lang Lang, emit func(Token)) {
	a := analyzer{text: text, emit: emit, lang: lang}
	a.run()
}

// run is one run of word runes in a compound.
type run struct {
	start, end int
	join       byte // the joiner before it ('.', '-', '_', '\'', '@', '+', ','); 0 for the first
	digits     bool // ASCII digits only
	letters    bool // letters (and marks) only
	single     bool // one letter
}

// word is one or more runs read as one word: a number, or runs joined by
// apostrophes.
type word struct {
	start, end int
	join       byte
	mode       foldMode
	letters    bool
	single     bool
}

type analyzer struct {
	text string
	emit func(Token)
	done func() bool // if set, reading stops once it returns true
	// firsts, if set, names the first bytes of the terms a caller looks
	// for (snippets): a word starting otherwise is not stemmed, as Porter2
	// keeps a word's first letter, so its stem could match none of them.
	firsts *[256]bool
	// onlyFirsts, with firsts, leaves out a word starting with an ASCII
	// byte not in firsts altogether (its position still counts): a
	// snippet that looks for no near word (word~) can match nothing
	// else, and most of a snippet's words are such.
	onlyFirsts bool
	// stems, if set, remembers English stems from one text to the next:
	// the snippets of a page share most of their words (see
	// snippetQuery.stems).
	stems map[string]string
	lang  Lang // the text's language; English stems as Analyze always has
	pos   int
	runs  [maxRuns]run
	words [maxRuns]word
	buf   []byte // folded text of the current token
	sbuf  []byte // stemmer's work space
}

func (a *analyzer) run() {
	text := a.text
	for i := 0; i < len(text); {
		if a.done != nil && a.done() {
			return
		}
		c := text[i]
		if c < utf8.RuneSelf {
			if isASCIIWord(c) {
				i = a.compound(i)
			} else {
				i++
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			i = a.cjk(i)
		case isWordRune(r):
			i = a.compound(i)
		default:
			i += n
		}
	}
}

func isASCIIWord(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9'
}

// isWordRune reports whether r is part of a word: a letter, a digit or a
// mark (the vowel signs of many scripts are marks).
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIWord(byte(r))
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// scanRun reads the run of word runes (not CJK) starting at i.
func (a *analyzer) scanRun(i int) run {
	text := a.text
	r := run{start: i, digits: true, letters: true}
	n := 0
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if !isASCIIWord(c) {
				break
			}
			if c <= '9' {
				r.letters = false
			} else {
				r.digits = false
			}
			i++
			n++
			continue
		}
		ru, w := utf8.DecodeRuneInString(text[i:])
		if isCJK(ru) || !isWordRune(ru) {
			break
		}
		r.digits = false
		if unicode.IsDigit(ru) {
			r.letters = false
		}
		if !unicode.IsMark(ru) {
			n++
		}
		i += w
	}
	r.end = i
	r.single = r.letters && n == 1
	return r
}

// joinerAt returns the joiner at i and its width in bytes, or 0.
func (a *analyzer) joinerAt(i int) (byte, int) {
	text := a.text
	if i >= len(text) {
		return 0, 0
	}
	switch c := text[i]; c {
	case '.', '-', '_', '\'', '@', '+', ',':
		return c, 1
	case 0xE2: // U+2019 right single quotation mark, U+2010/2011 hyphens
		if i+2 < len(text) && text[i+1] == 0x80 {
			switch text[i+2] {
			case 0x99:
				return '\'', 3
			case 0x90, 0x91:
				return '-', 3
			}
		}
	}
	return 0, 0
}

// wordStartsAt reports whether a non-CJK word rune starts at i.
func (a *analyzer) wordStartsAt(i int) bool {
	if i >= len(a.text) {
		return false
	}
	if c := a.text[i]; c < utf8.RuneSelf {
		return isASCIIWord(c)
	}
	r, _ := utf8.DecodeRuneInString(a.text[i:])
	return !isCJK(r) && isWordRune(r)
}

// compound reads the runs joined at i and emits their tokens; it returns
// where reading goes on.
func (a *analyzer) compound(i int) int {
	runs := a.runs[:0]
	r := a.scanRun(i)
	runs = append(runs, r)
	end := r.end
	for len(runs) < maxRuns {
		j, w := a.joinerAt(end)
		if j == 0 || !a.wordStartsAt(end+w) {
			break
		}
		next := a.scanRun(end + w)
		if j == ',' && !(runs[len(runs)-1].digits && next.digits && next.end-next.start == 3) {
			break
		}
		next.join = j
		runs = append(runs, next)
		end = next.end
	}
	// "c++", "c#": a short word keeps the suffix that names a language.
	var suffix int
	if last := runs[len(runs)-1]; last.letters && last.end-last.start <= 2 {
		rest := a.text[end:]
		switch {
		case len(rest) >= 2 && rest[0] == '+' && rest[1] == '+':
			suffix = 2
		case len(rest) >= 1 && rest[0] == '#':
			suffix = 1
		}
		if suffix > 0 && a.wordStartsAt(end+suffix) {
			suffix = 0
		}
	}

	if at, stop := a.address(runs); at > 0 {
		a.words1(runs[:stop], 0)
		a.words1(runs[stop:], suffix)
	} else {
		a.words1(runs, suffix)
	}
	return end + suffix
}

// address finds an e-mail address in runs: a local part, one '@', and a
// domain of at least two labels ending in letters. It emits the whole
// address and returns the index of the run after '@' and the end of the
// address's runs; at is 0 when there is none.
func (a *analyzer) address(runs []run) (at, stop int) {
	for k := 1; k < len(runs); k++ {
		if runs[k].join == '@' {
			at = k
			break
		}
	}
	if at == 0 {
		return 0, 0
	}
	for k := 1; k < at; k++ {
		if runs[k].join == ',' {
			return 0, 0
		}
	}
	stop = at + 1
	dots := 0
	for stop < len(runs) && (runs[stop].join == '.' || runs[stop].join == '-') {
		if runs[stop].join == '.' {
			dots++
		}
		stop++
	}
	if dots == 0 || !runs[stop-1].letters || runs[stop-1].single {
		return 0, 0
	}
	start, end := runs[0].start, runs[stop-1].end
	if end-start <= MaxAddressBytes {
		a.buf = appendFold(a.buf[:0], a.text[start:end], foldVerbatim)
		w := a.str(start, end)
		a.emitToken(w, w, start, end)
	}
	return at, stop
}

// words1 groups runs into words (numbers, apostrophes) and emits them,
// with the joined forms of hyphenated words and acronyms.
func (a *analyzer) words1(runs []run, suffix int) {
	if len(runs) == 0 {
		return
	}
	words := a.words[:0]
	for i := 0; i < len(runs); {
		r := runs[i]
		w := word{start: r.start, end: r.end, join: r.join, letters: r.letters, single: r.single}
		j := i + 1
		if r.digits {
			for j < len(runs) && runs[j].digits && (runs[j].join == '.' || runs[j].join == ',') {
				j++
			}
			if j > i+1 {
				w.mode = foldNumber
				w.end = runs[j-1].end
			}
		}
		if j == i+1 {
			for j < len(runs) && runs[j].join == '\'' {
				j++
			}
			if j > i+1 {
				w.single = false
				w.end = runs[j-1].end
				if l := runs[j-1]; l.end-l.start == 1 && a.text[l.start]|0x20 == 's' {
					w.end = runs[j-2].end // possessive
				}
				for _, x := range runs[i+1 : j] {
					w.letters = w.letters && x.letters
				}
			}
		}
		words = append(words, w)
		i = j
	}
	if suffix > 0 {
		l := &words[len(words)-1]
		l.end += suffix
		l.mode = foldVerbatim
		l.letters, l.single = false, false
	}

	for k := 0; k < len(words); {
		m := k + 1
		if words[k].letters {
			for m < len(words) && words[m].join == '-' && words[m].letters {
				m++
			}
		}
		if m == k+1 && words[k].single {
			for m < len(words) && words[m].join == '.' && words[m].single {
				m++
			}
		}
		if n := m - k; n >= 2 && (n <= maxJoined || words[k].single) {
			start, end := words[k].start, words[m-1].end
			if end-start <= MaxWordBytes {
				a.buf = appendFold(a.buf[:0], a.text[start:end], foldWord)
				w := a.str(start, end)
				a.emitToken(a.stemWord(w, start, end), w, start, end)
			}
		}
		for ; k < m; k++ {
			a.word(words[k])
		}
	}
}

// word emits one word at the next position.
func (a *analyzer) word(w word) {
	if w.end-w.start > MaxWordBytes {
		a.pos++
		return
	}
	if a.onlyFirsts && w.mode == foldWord {
		if c := a.text[w.start]; c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if !a.firsts[c] {
				a.pos++ // a word of letters and digits folds to one
				return
			}
		}
	}
	a.buf = appendFold(a.buf[:0], a.text[w.start:w.end], w.mode)
	if len(a.buf) == 0 {
		return // only marks
	}
	s := a.str(w.start, w.end)
	term := s
	if w.mode == foldWord && (a.firsts == nil || a.firsts[s[0]]) {
		term = a.stemWord(s, w.start, w.end)
	}
	if a.emitToken(term, s, w.start, w.end) {
		a.pos++
	}
}

// str returns a.buf as a string, text[start:end] itself when folding
// changed nothing.
func (a *analyzer) str(start, end int) string {
	if s := a.text[start:end]; s == string(a.buf) {
		return s
	}
	return string(a.buf)
}

// stemWord returns the term of the folded word w, text[start:end] as
// written: its stem in the text's language when that language stems it,
// else its English stem.
func (a *analyzer) stemWord(w string, start, end int) string {
	if a.lang != LangEnglish && stemsIn(a.lang, a.text[start:end]) {
		t := langStem(a.lang, a.text[start:end], a.sbuf)
		if len(t) <= len(w) && w[:len(t)] == t {
			return w[:len(t)]
		}
		return t
	}
	return a.stem(w)
}

// stem returns the stem of an English-looking folded word, w otherwise.
func (a *analyzer) stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	if t, ok := a.stems[w]; ok {
		return t
	}
	a.sbuf = stemBytes(append(a.sbuf[:0], w...))
	t := string(a.sbuf)
	if len(a.sbuf) <= len(w) && w[:len(a.sbuf)] == t {
		t = w[:len(a.sbuf)]
	}
	if a.stems != nil && len(a.stems) < maxRememberedStems {
		a.stems[w] = t
	}
	return t
}

// maxRememberedStems bounds analyzer.stems: a page of snippets has a
// few thousand different words at most.
const maxRememberedStems = 4096

// emitToken emits a token at the current position unless it is empty or
// too long.
func (a *analyzer) emitToken(term, w string, start, end int) bool {
	if term == "" || w == "" || len(term) > MaxTermBytes || len(w) > MaxTermBytes {
		return false
	}
	a.emit(Token{Term: term, Word: w, Pos: a.pos, Start: start, End: end})
	return true
}
