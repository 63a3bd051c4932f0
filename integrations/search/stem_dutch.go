package search

// Dutch stemming, the Snowball Dutch stemmer: "lichamelijk" and
// "lichamelijke" are both "licham". It takes a lower-case word with its
// accents and returns a stem without them.

const (
	dutchVowels grouping = "aeiouyè"
	dutchVowelI grouping = "aeiouyèI"
	dutchVowelJ grouping = "aeiouyèj"
)

var (
	dutchStep1  = newSuffixes("heden", "en", "ene", "s", "se")
	dutchDouble = newSuffixes("kk", "dd", "tt")
	dutchStep3  = newSuffixes("end", "ing", "ig", "lijk", "baar", "bar")
	dutchLong   = newSuffixes("aa", "ee", "oo", "uu")
)

type dutchWord struct {
	*snow
	p1, p2 int
	eFound bool
}

// stemDutch returns the Snowball Dutch stem of a lower-case word.
func stemDutch(word string) string {
	d := &dutchWord{snow: newSnow(word)}
	w := d.w
	for i, r := range w {
		switch r {
		case 'ä', 'á':
			w[i] = 'a'
		case 'ë', 'é':
			w[i] = 'e'
		case 'ï', 'í':
			w[i] = 'i'
		case 'ö', 'ó':
			w[i] = 'o'
		case 'ü', 'ú':
			w[i] = 'u'
		}
	}
	if len(w) > 0 && w[0] == 'y' {
		w[0] = 'Y'
	}
	for i := 0; i+1 < len(w); i++ {
		if !dutchVowels.has(w[i]) {
			continue
		}
		if w[i+1] == 'i' && i+2 < len(w) && dutchVowels.has(w[i+2]) {
			w[i+1] = 'I'
		} else if w[i+1] == 'y' {
			w[i+1] = 'Y'
		}
	}
	d.p1, d.p2 = d.regions(dutchVowels)
	if d.p1 < len(w) {
		d.p1 = max(d.p1, 3)
	}
	d.restart()
	d.standard()
	for i, r := range d.w {
		if r == 'I' || r == 'Y' {
			d.w[i] = r - 'A' + 'a'
		}
	}
	return d.String()
}

func (d *dutchWord) undouble() bool {
	c := d.c
	if d.find(dutchDouble) == "" {
		return false
	}
	d.c = c
	d.ket = d.c
	d.c--
	d.bra = d.c
	d.del()
	return true
}

func (d *dutchWord) eEnding() bool {
	d.eFound = false
	if !d.ketB("e") || d.c < d.p1 {
		return false
	}
	c := d.c
	if !d.outB(dutchVowels) {
		return false
	}
	d.c = c
	d.del()
	d.eFound = true
	return d.undouble()
}

func (d *dutchWord) enEnding() bool {
	c := d.c
	if c < d.p1 || !d.outB(dutchVowels) {
		return false
	}
	d.c = c
	if d.before("gem") {
		return false
	}
	d.del()
	return d.undouble()
}

func (d *dutchWord) standard() {
	switch d.among(dutchStep1) {
	case "heden":
		if d.c >= d.p1 {
			d.from("heid")
		}
	case "en", "ene":
		d.enEnding()
	case "s", "se":
		if d.c >= d.p1 && d.outB(dutchVowelJ) {
			d.del()
		}
	}
	d.restart()
	d.eEnding()
	d.restart()
	if d.ketB("heid") && d.c >= d.p2 && !d.before("c") {
		d.del()
		if d.ketB("en") {
			d.enEnding()
		}
	}
	d.restart()
	d.step3()
	d.restart()
	if d.outB(dutchVowelI) {
		c := d.c
		if d.find(dutchLong) != "" && d.outB(dutchVowels) {
			d.c = c
			d.ket = d.c
			d.c--
			d.bra = d.c
			d.del()
		}
	}
}

func (d *dutchWord) step3() {
	r2 := func() bool { return d.c >= d.p2 }
	switch d.among(dutchStep3) {
	case "end", "ing":
		if !r2() {
			return
		}
		d.del()
		c := d.c
		if d.ketB("ig") && r2() && !d.before("e") {
			d.del()
		} else {
			d.c = c
			d.undouble()
		}
	case "ig":
		if r2() && !d.before("e") {
			d.del()
		}
	case "lijk":
		if r2() {
			d.del()
			d.eEnding()
		}
	case "baar":
		if r2() {
			d.del()
		}
	case "bar":
		if r2() && d.eFound {
			d.del()
		}
	}
}
