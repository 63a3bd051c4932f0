package search

import "unicode/utf8"

// Greek stemming, the Snowball Greek stemmer: "καλημέρες" and "καλημέρα"
// are both "καλημερ". It takes a word in Greek letters, of either case,
// with or without accents, and returns a stem in lower case without them
// (and σ for a final ς).

// greekWord is a word being stemmed: its letters, and whether no suffix
// rule has fired yet (Snowball's test1), which the last rule wants.
type greekWord struct {
	w     []rune
	test1 bool
}

// stemGreek returns the Snowball Greek stem of a word.
func stemGreek(word string) string {
	g := &greekWord{test1: true}
	for _, r := range word {
		g.w = append(g.w, greekLower(r))
	}
	if len(g.w) < 3 {
		return string(g.w)
	}
	for _, step := range greekSteps {
		step(g)
	}
	return string(g.w)
}

// greekLower lower-cases a Greek letter and drops its accents; a final
// sigma is a sigma.
func greekLower(r rune) rune {
	switch r {
	case 'Ϊ', 'Ί', 'ί':
		return 'ι'
	case 'ΐ', 'ϊ': // the published stems have η here
		return 'η'
	case 'Ϋ', 'ΰ', 'ϋ', 'Ύ', 'ύ':
		return 'υ'
	case 'Ά', 'ά':
		return 'α'
	case 'Έ', 'έ':
		return 'ε'
	case 'Ή', 'ή':
		return 'η'
	case 'Ό', 'ό':
		return 'ο'
	case 'Ώ', 'ώ':
		return 'ω'
	case 'ς':
		return 'σ'
	}
	if r >= 'Α' && r <= 'Ω' && r != 0x3A2 {
		return r + 'α' - 'Α'
	}
	return r
}

// suffix returns the longest of list the word ends with, or "".
func (g *greekWord) suffix(list []string) string {
	best := ""
	for _, s := range list {
		if len(s) > len(best) && g.ends(s) {
			best = s
		}
	}
	return best
}

func (g *greekWord) ends(s string) bool {
	i := len(g.w)
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if i == 0 || g.w[i-1] != r {
			return false
		}
		i--
		s = s[:len(s)-n]
	}
	return true
}

// endsAny reports whether the word ends with one of list.
func (g *greekWord) endsAny(list []string) bool {
	for _, s := range list {
		if g.ends(s) {
			return true
		}
	}
	return false
}

// is reports whether the word is one of list.
func (g *greekWord) is(list []string) bool {
	for _, s := range list {
		if utf8.RuneCountInString(s) == len(g.w) && g.ends(s) {
			return true
		}
	}
	return false
}

// cut removes the suffix s.
func (g *greekWord) cut(s string) { g.w = g.w[:len(g.w)-utf8.RuneCountInString(s)] }

func (g *greekWord) add(s string) {
	for _, r := range s {
		g.w = append(g.w, r)
	}
}

// drop removes the longest of list the word ends with and clears test1;
// false when it ends with none.
func (g *greekWord) drop(list []string) bool {
	s := g.suffix(list)
	if s == "" {
		return false
	}
	g.cut(s)
	g.test1 = false
	return true
}

// restore is a rule that puts a piece of a removed suffix back: add is
// appended when the word left is one of whole, or ends with one of ends.
type restore struct {
	whole, ends []string
	add         string
}

// then applies the first restore that fits.
func (g *greekWord) then(rs ...restore) {
	for _, r := range rs {
		if r.whole != nil && g.is(r.whole) || r.ends != nil && g.endsAny(r.ends) {
			g.add(r.add)
			return
		}
	}
}

// endsVowel reports whether the word ends with a letter of v.
func (g *greekWord) endsVowel(v grouping) bool {
	return len(g.w) > 0 && v.has(g.w[len(g.w)-1])
}

const (
	greekV  grouping = "αεηιουω"
	greekV2 grouping = "αεηιοω"
)

// greekSteps are the algorithm's steps, in its order.
var greekSteps = []func(*greekWord){
	func(g *greekWord) { // step 1: irregular nouns
		if s := g.suffix(grStep1_0Keys); s != "" {
			g.cut(s)
			g.add(grStep1_0[s])
			g.test1 = false
		}
	},
	func(g *greekWord) {
		if g.drop(grSteps1_0) {
			g.then(restore{whole: grSteps1_1, add: "ι"}, restore{whole: grSteps1_2, add: "ιζ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grSteps2_0) {
			g.then(restore{whole: grSteps2_1, add: "ων"})
		}
	},
	func(g *greekWord) {
		if g.drop(grSteps3_0) {
			g.then(restore{whole: []string{"ισα"}, add: "ισ"}, restore{whole: grSteps3_1, add: "ι"}, restore{whole: grSteps3_2, add: "ισ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grSteps4_0) {
			g.then(restore{whole: grSteps4_1, add: "ι"})
		}
	},
	func(g *greekWord) {
		if g.drop(grSteps5_0) {
			g.then(restore{whole: grSteps5_1, add: "ι"}, restore{whole: grSteps5_2, add: "ιστ"})
		}
	},
	func(g *greekWord) {
		if !g.drop(grSteps6_0) {
			return
		}
		if g.is(grSteps6_1) {
			g.add("ισμ")
		} else if g.is(grSteps6_2) {
			g.add("ι")
		} else if s := g.suffix(grSteps6_3Keys); s != "" {
			g.cut(s)
			g.add(grSteps6_3[s])
		}
	},
	func(g *greekWord) {
		if g.drop(grSteps7_0) {
			g.then(restore{whole: grSteps7_1, add: "αρακ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grSteps8_0) {
			g.then(restore{whole: grSteps8_1, add: "ακ"}, restore{whole: grSteps8_2, add: "ιτσ"}, restore{ends: []string{"κορ"}, add: "ιτσ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grSteps9_0) {
			g.then(restore{whole: grSteps9_1, add: "ιδ"}, restore{ends: grSteps9_2, add: "ιδ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grSteps10_0) {
			g.then(restore{whole: grSteps10_1, add: "ισκ"})
		}
	},
	func(g *greekWord) { // step 2a: -αδες, -αδων keep -αδ but after a few stems
		if s := g.suffix(grStep2a_0); s != "" {
			g.cut(s)
			if !g.endsAny(grStep2a_1) {
				g.add("αδ")
			}
		}
	},
	func(g *greekWord) {
		if s := g.suffix(grStep2b_0); s != "" {
			g.cut(s)
			g.then(restore{ends: grStep2b_1, add: "εδ"})
		}
	},
	func(g *greekWord) {
		if s := g.suffix(grStep2c_0); s != "" {
			g.cut(s)
			g.then(restore{ends: grStep2c_1, add: "ουδ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grStep2d_0) {
			g.then(restore{whole: grStep2d_1, add: "ε"})
		}
	},
	func(g *greekWord) {
		if g.drop(grStep3_0) && g.endsVowel(greekV) {
			g.add("ι")
		}
	},
	func(g *greekWord) {
		if !g.drop(grStep4_0) {
			return
		}
		if g.endsVowel(greekV) {
			g.add("ικ")
		} else {
			g.then(restore{whole: grStep4_1, add: "ικ"})
		}
	},
	greekStep5a, greekStep5b, greekStep5c,
	func(g *greekWord) {
		if !g.drop(grStep5d_0) {
			return
		}
		if string(g.w) == "αρχ" {
			g.add("οντ")
		} else if g.ends("κρε") {
			g.add("ωντ")
		}
	},
	func(g *greekWord) {
		if g.drop(grStep5e_0) && string(g.w) == "ον" {
			g.add("ομαστ")
		}
	},
	func(g *greekWord) {
		if g.drop([]string{"ιεστε"}) {
			g.then(restore{whole: grStep5f_0, add: "ιεστ"})
		}
		if g.drop([]string{"εστε"}) {
			g.then(restore{whole: grStep5f_1, add: "ιεστ"})
		}
	},
	func(g *greekWord) {
		g.drop(grStep5g_0)
		if g.drop(grStep5g_1) {
			g.then(restore{ends: grStep5g_2, add: "ηκ"}, restore{whole: grStep5g_3, add: "ηκ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grStep5h_0) {
			g.then(restore{ends: grStep5h_1, add: "ουσ"}, restore{whole: grStep5h_2, add: "ουσ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grStep5j_0) {
			g.then(restore{whole: grStep5j_1, add: "ησ"})
		}
	},
	func(g *greekWord) {
		if !g.drop(grStep5i_0) {
			return
		}
		if g.ends("κολλ") {
			g.add("αγ")
		} else if !g.endsAny(grStep5i_1) {
			g.then(restore{ends: grStep5i_2, add: "αγ"}, restore{whole: grStep5i_3, add: "αγ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grStep5k_0) {
			g.then(restore{whole: grStep5k_1, add: "ηστ"})
		}
	},
	func(g *greekWord) {
		if g.drop(grStep5l_0) {
			g.then(restore{whole: grStep5l_1, add: "ουν"})
		}
	},
	func(g *greekWord) {
		if g.drop(grStep5m_0) {
			g.then(restore{whole: grStep5m_1, add: "ουμ"})
		}
	},
	func(g *greekWord) { // step 6: the common endings, when no rule above fired
		if s := g.suffix(grStep6_0); s != "" {
			g.cut(s)
			g.add("μα")
		}
		if g.test1 {
			if s := g.suffix(grStep6_1); s != "" {
				g.cut(s)
			}
		}
	},
	func(g *greekWord) { // step 7: comparatives and superlatives
		if s := g.suffix(grStep7_0); s != "" {
			g.cut(s)
		}
	},
}

func greekStep5a(g *greekWord) {
	if string(g.w) == "αγαμε" {
		g.w = []rune("αγαμ")
	}
	g.drop(grStep5a_0)
	if g.ends("αμε") {
		g.cut("αμε")
		g.test1 = false
		g.then(restore{whole: grStep5a_1, add: "αμ"})
	}
}

func greekStep5b(g *greekWord) {
	if g.drop(grStep5b_0) {
		g.then(restore{whole: grStep5b_1, add: "αγαν"})
	}
	if !g.ends("ανε") {
		return
	}
	g.cut("ανε")
	g.test1 = false
	if g.endsVowel(greekV2) {
		g.add("αν")
	} else {
		g.then(restore{whole: grStep5b_2, add: "αν"})
	}
}

func greekStep5c(g *greekWord) {
	g.drop(grStep5c_0)
	if !g.ends("ετε") {
		return
	}
	g.cut("ετε")
	g.test1 = false
	if g.endsVowel(greekV2) {
		g.add("ετ")
	} else {
		g.then(restore{ends: grStep5c_1, add: "ετ"}, restore{whole: grStep5c_2, add: "ετ"})
	}
}

// The algorithm's lists of suffixes and stems, in its order.
var grStep1_0 = map[string]string{"φαγια": "φα", "φαγιου": "φα", "φαγιων": "φα", "σκαγια": "σκα", "σκαγιου": "σκα", "σκαγιων": "σκα", "ολογιου": "ολο", "ολογια": "ολο", "ολογιων": "ολο", "σογιου": "σο", "σογια": "σο", "σογιων": "σο", "τατογια": "τατο", "τατογιου": "τατο", "τατογιων": "τατο", "κρεασ": "κρε", "κρεατοσ": "κρε", "κρεατα": "κρε", "κρεατων": "κρε", "περασ": "περ", "περατοσ": "περ", "περατη": "περ", "περατα": "περ", "περατων": "περ", "τερασ": "τερ", "τερατοσ": "τερ", "τερατα": "τερ", "τερατων": "τερ", "φωσ": "φω", "φωτοσ": "φω", "φωτα": "φω", "φωτων": "φω", "καθεστωσ": "καθεστ", "καθεστωτοσ": "καθεστ", "καθεστωτα": "καθεστ", "καθεστωτων": "καθεστ", "γεγονοσ": "γεγον", "γεγονοτοσ": "γεγον", "γεγονοτα": "γεγον", "γεγονοτων": "γεγον"}
var grStep1_0Keys = []string{"φαγια", "φαγιου", "φαγιων", "σκαγια", "σκαγιου", "σκαγιων", "ολογιου", "ολογια", "ολογιων", "σογιου", "σογια", "σογιων", "τατογια", "τατογιου", "τατογιων", "κρεασ", "κρεατοσ", "κρεατα", "κρεατων", "περασ", "περατοσ", "περατη", "περατα", "περατων", "τερασ", "τερατοσ", "τερατα", "τερατων", "φωσ", "φωτοσ", "φωτα", "φωτων", "καθεστωσ", "καθεστωτοσ", "καθεστωτα", "καθεστωτων", "γεγονοσ", "γεγονοτοσ", "γεγονοτα", "γεγονοτων"}
var grSteps1_0 = []string{"ιζα", "ιζεσ", "ιζε", "ιζαμε", "ιζατε", "ιζαν", "ιζανε", "ιζω", "ιζεισ", "ιζει", "ιζουμε", "ιζετε", "ιζουν", "ιζουνε"}
var grSteps1_1 = []string{"αναμπα", "εμπα", "επα", "ξαναπα", "πα", "περιπα", "αθρο", "συναθρο", "δανε"}
var grSteps1_2 = []string{"μαρκ", "κορν", "αμπαρ", "αρρ", "βαθυρι", "βαρκ", "β", "βολβορ", "γκρ", "γλυκορ", "γλυκυρ", "ιμπ", "λ", "λου", "μαρ", "μ", "πρ", "μπρ", "πολυρ", "π", "ρ", "πιπερορ"}
var grSteps2_0 = []string{"ωθηκα", "ωθηκεσ", "ωθηκε", "ωθηκαμε", "ωθηκατε", "ωθηκαν", "ωθηκανε"}
var grSteps2_1 = []string{"αλ", "βι", "εν", "υψ", "λι", "ζω", "σ", "χ"}
var grSteps3_0 = []string{"ισα", "ισεσ", "ισε", "ισαμε", "ισατε", "ισαν", "ισανε"}
var grSteps3_1 = []string{"αναμπα", "αθρο", "εμπα", "εσε", "εσωκλε", "επα", "ξαναπα", "επε", "περιπα", "συναθρο", "δανε", "κλε", "χαρτοπα", "εξαρχα", "μετεπε", "αποκλε", "απεκλε", "εκλε", "πε"}
var grSteps3_2 = []string{"αν", "αφ", "γε", "γιγαντοαφ", "γκε", "δημοκρατ", "κομ", "γκ", "μ", "π", "πουκαμ", "ολο", "λαρ"}
var grSteps4_0 = []string{"ισω", "ισεισ", "ισει", "ισουμε", "ισετε", "ισουν", "ισουνε"}
var grSteps4_1 = []string{"αναμπα", "εμπα", "εσε", "εσωκλε", "επα", "ξαναπα", "επε", "περιπα", "αθρο", "συναθρο", "δανε", "κλε", "χαρτοπα", "εξαρχα", "μετεπε", "αποκλε", "απεκλε", "εκλε", "πε"}
var grSteps5_0 = []string{"ιστοσ", "ιστου", "ιστο", "ιστε", "ιστοι", "ιστων", "ιστουσ", "ιστη", "ιστησ", "ιστα", "ιστεσ"}
var grSteps5_1 = []string{"δανε", "συναθρο", "κλε", "σε", "εσωκλε", "ασε", "πλε"}
var grSteps5_2 = []string{"μ", "π", "απ", "αρ", "ηδ", "κτ", "σκ", "σχ", "υψ", "φα", "χρ", "χτ", "ακτ", "αορ", "ασχ", "ατα", "αχν", "αχτ", "γεμ", "γυρ", "εμπ", "ευπ", "εχθ", "ηφα", "καθ", "κακ", "κυλ", "λυγ", "μακ", "μεγ", "ταχ", "φιλ", "χωρ"}
var grSteps6_0 = []string{"ισμο", "ισμοι", "ισμοσ", "ισμου", "ισμουσ", "ισμων"}
var grSteps6_1 = []string{"σε", "μετασε", "μικροσε", "εγκλε", "αποκλε"}
var grSteps6_2 = []string{"δανε", "αντιδανε"}
var grSteps6_3 = map[string]string{"αγνωστικ": "αγνωστ", "ατομικ": "ατομ", "γνωστικ": "γνωστ", "εθνικ": "εθν", "εκλεκτικ": "εκλεκτ", "σκεπτικ": "σκεπτ", "τοπικ": "τοπ", "αλεξανδριν": "αλεξανδρ", "βυζαντιν": "βυζαντ", "θεατριν": "θεατρ"}
var grSteps6_3Keys = []string{"αγνωστικ", "ατομικ", "γνωστικ", "εθνικ", "εκλεκτικ", "σκεπτικ", "τοπικ", "αλεξανδριν", "βυζαντιν", "θεατριν"}
var grSteps7_0 = []string{"αρακι", "αρακια", "ουδακι", "ουδακια"}
var grSteps7_1 = []string{"σ", "χ"}
var grSteps8_0 = []string{"ακι", "ακια", "ιτσα", "ιτσασ", "ιτσεσ", "ιτσων", "αρακι", "αρακια"}
var grSteps8_1 = []string{"βαμβ", "βρ", "καιμ", "κον", "κορ", "λαβρ", "λουλ", "μερ", "μουστ", "ναγκασ", "πλ", "ρ", "ρυ", "σ", "σκ", "σοκ", "σπαν", "τζ", "φαρμ", "χ", "καπακ", "αλισφ", "αμβρ", "ανθρ", "κ", "φυλ", "κατραπ", "κλιμ", "μαλ", "σλοβ", "φ", "σφ", "τσεχοσλοβ"}
var grSteps8_2 = []string{"β", "βαλ", "γιαν", "γλ", "ζ", "ηγουμεν", "καρδ", "κον", "μακρυν", "νυφ", "πατερ", "π", "σκ", "τοσ", "τριπολ"}
var grSteps9_0 = []string{"ιδιο", "ιδια", "ιδιων"}
var grSteps9_1 = []string{"αιφν", "ιρ", "ολο", "ψαλ"}
var grSteps9_2 = []string{"ε", "παιχν"}
var grSteps10_0 = []string{"ισκοσ", "ισκου", "ισκο", "ισκε"}
var grSteps10_1 = []string{"δ", "ιβ", "μην", "ρ", "φραγκ", "λυκ", "οβελ"}
var grStep2a_0 = []string{"αδεσ", "αδων"}
var grStep2a_1 = []string{"οκ", "μαμ", "μαν", "μπαμπ", "πατερ", "γιαγι", "νταντ", "κυρ", "θει", "πεθερ"}
var grStep2b_0 = []string{"εδεσ", "εδων"}
var grStep2b_1 = []string{"οπ", "ιπ", "εμπ", "υπ", "γηπ", "δαπ", "κρασπ", "μιλ"}
var grStep2c_0 = []string{"ουδεσ", "ουδων"}
var grStep2c_1 = []string{"αρκ", "καλιακ", "πεταλ", "λιχ", "πλεξ", "σκ", "σ", "φλ", "φρ", "βελ", "λουλ", "χν", "σπ", "τραγ", "φε"}
var grStep2d_0 = []string{"εωσ", "εων"}
var grStep2d_1 = []string{"θ", "δ", "ελ", "γαλ", "ν", "π", "ιδ", "παρ"}
var grStep3_0 = []string{"ια", "ιου", "ιων"}
var grStep4_0 = []string{"ικα", "ικο", "ικου", "ικων"}
var grStep4_1 = []string{"αλ", "αδ", "ενδ", "αμαν", "αμμοχαλ", "ηθ", "ανηθ", "αντιδ", "φυσ", "βρωμ", "γερ", "εξωδ", "καλπ", "καλλιν", "καταδ", "μουλ", "μπαν", "μπαγιατ", "μπολ", "μποσ", "νιτ", "ξικ", "συνομηλ", "πετσ", "πιτσ", "πικαντ", "πλιατσ", "ποστελν", "πρωτοδ", "σερτ", "συναδ", "τσαμ", "υποδ", "φιλον", "φυλοδ", "χασ"}
var grStep5a_0 = []string{"αγαμε", "ησαμε", "ουσαμε", "ηκαμε", "ηθηκαμε"}
var grStep5a_1 = []string{"αναπ", "αποθ", "αποκ", "αποστ", "βουβ", "ξεθ", "ουλ", "πεθ", "πικρ", "ποτ", "σιχ", "χ"}
var grStep5b_0 = []string{"αγανε", "ησανε", "ουσανε", "ιοντανε", "ιοτανε", "ιουντανε", "οντανε", "οτανε", "ουντανε", "ηκανε", "ηθηκανε"}
var grStep5b_1 = []string{"τρ", "τσ"}
var grStep5b_2 = []string{"βετερ", "βουλκ", "βραχμ", "γ", "δραδουμ", "θ", "καλπουζ", "καστελ", "κορμορ", "λαοπλ", "μωαμεθ", "μ", "μουσουλμ", "ν", "ουλ", "π", "πελεκ", "πλ", "πολισ", "πορτολ", "σαρακατσ", "σουλτ", "τσαρλατ", "ορφ", "τσιγγ", "τσοπ", "φωτοστεφ", "χ", "ψυχοπλ", "αγ", "γαλ", "γερ", "δεκ", "διπλ", "αμερικαν", "ουρ", "πιθ", "πουριτ", "σ", "ζωντ", "ικ", "καστ", "κοπ", "λιχ", "λουθηρ", "μαιντ", "μελ", "σιγ", "σπ", "στεγ", "τραγ", "τσαγ", "φ", "ερ", "αδαπ", "αθιγγ", "αμηχ", "ανικ", "ανοργ", "απηγ", "απιθ", "ατσιγγ", "βασ", "βασκ", "βαθυγαλ", "βιομηχ", "βραχυκ", "διατ", "διαφ", "ενοργ", "θυσ", "καπνοβιομηχ", "καταγαλ", "κλιβ", "κοιλαρφ", "λιβ", "μεγλοβιομηχ", "μικροβιομηχ", "νταβ", "ξηροκλιβ", "ολιγοδαμ", "ολογαλ", "πενταρφ", "περηφ", "περιτρ", "πλατ", "πολυδαπ", "πολυμηχ", "στεφ", "ταβ", "τετ", "υπερηφ", "υποκοπ", "χαμηλοδαπ", "ψηλοταβ"}
var grStep5c_0 = []string{"ησετε"}
var grStep5c_1 = []string{"οδ", "αιρ", "φορ", "ταθ", "διαθ", "σχ", "ενδ", "ευρ", "τιθ", "υπερθ", "ραθ", "ενθ", "ροθ", "σθ", "πυρ", "αιν", "συνδ", "συν", "συνθ", "χωρ", "πον", "βρ", "καθ", "ευθ", "εκθ", "νετ", "ρον", "αρκ", "βαρ", "βολ", "ωφελ"}
var grStep5c_2 = []string{"αβαρ", "βεν", "εναρ", "αβρ", "αδ", "αθ", "αν", "απλ", "βαρον", "ντρ", "σκ", "κοπ", "μπορ", "νιφ", "παγ", "παρακαλ", "σερπ", "σκελ", "συρφ", "τοκ", "υ", "δ", "εμ", "θαρρ", "θ"}
var grStep5d_0 = []string{"οντασ", "ωντασ"}
var grStep5e_0 = []string{"ομαστε", "ιομαστε"}
var grStep5f_0 = []string{"π", "απ", "συμπ", "ασυμπ", "ακαταπ", "αμεταμφ"}
var grStep5f_1 = []string{"αλ", "αρ", "εκτελ", "ζ", "μ", "ξ", "παρακαλ", "προ", "νισ"}
var grStep5g_0 = []string{"ηθηκα", "ηθηκεσ", "ηθηκε"}
var grStep5g_1 = []string{"ηκα", "ηκεσ", "ηκε"}
var grStep5g_2 = []string{"σκωλ", "σκουλ", "ναρθ", "σφ", "οθ", "πιθ"}
var grStep5g_3 = []string{"διαθ", "θ", "παρακαταθ", "προσθ", "συνθ"}
var grStep5h_0 = []string{"ουσα", "ουσεσ", "ουσε"}
var grStep5h_1 = []string{"ποδαρ", "βλεπ", "πανταχ", "φρυδ", "μαντιλ", "μαλλ", "κυματ", "λαχ", "ληγ", "φαγ", "ομ", "πρωτ"}
var grStep5h_2 = []string{"φαρμακ", "χαδ", "αγκ", "αναρρ", "βρομ", "εκλιπ", "λαμπιδ", "λεχ", "μ", "πατ", "ρ", "λ", "μεδ", "μεσαζ", "υποτειν", "αμ", "αιθ", "ανηκ", "δεσποζ", "ενδιαφερ", "δε", "δευτερευ", "καθαρευ", "πλε", "τσα"}
var grStep5i_0 = []string{"αγα", "αγεσ", "αγε"}
var grStep5i_1 = []string{"ψοφ", "ναυλοχ"}
var grStep5i_2 = []string{"οφ", "πελ", "χορτ", "λλ", "σφ", "ρπ", "φρ", "πρ", "λοχ", "σμην"}
var grStep5i_3 = []string{"αβαστ", "πολυφ", "αδηφ", "παμφ", "ρ", "ασπ", "αφ", "αμαλ", "αμαλλι", "ανυστ", "απερ", "ασπαρ", "αχαρ", "δερβεν", "δροσοπ", "ξεφ", "νεοπ", "νομοτ", "ολοπ", "ομοτ", "προστ", "προσωποπ", "συμπ", "συντ", "τ", "υποτ", "χαρ", "αειπ", "αιμοστ", "ανυπ", "αποτ", "αρτιπ", "διατ", "εν", "επιτ", "κροκαλοπ", "σιδηροπ", "λ", "ναυ", "ουλαμ", "ουρ", "π", "τρ", "μ"}
var grStep5j_0 = []string{"ησε", "ησου", "ησα"}
var grStep5j_1 = []string{"ν", "χερσον", "δωδεκαν", "ερημον", "μεγαλον", "επταν"}
var grStep5k_0 = []string{"ηστε"}
var grStep5k_1 = []string{"ασβ", "σβ", "αχρ", "χρ", "απλ", "αειμν", "δυσχρ", "ευχρ", "κοινοχρ", "παλιμψ"}
var grStep5l_0 = []string{"ουνε", "ησουνε", "ηθουνε"}
var grStep5l_1 = []string{"ν", "ρ", "σπι", "στραβομουτσ", "κακομουτσ", "εξων"}
var grStep5m_0 = []string{"ουμε", "ησουμε", "ηθουμε"}
var grStep5m_1 = []string{"παρασουσ", "φ", "χ", "ωριοπλ", "αζ", "αλλοσουσ", "ασουσ"}
var grStep6_0 = []string{"ματα", "ματων", "ματοσ"}
var grStep6_1 = []string{"α", "αγατε", "αγαν", "αει", "αμαι", "αν", "ασ", "ασαι", "αται", "αω", "ε", "ει", "εισ", "ειτε", "εσαι", "εσ", "εται", "ι", "ιεμαι", "ιεμαστε", "ιεται", "ιεσαι", "ιεσαστε", "ιομασταν", "ιομουν", "ιομουνα", "ιονταν", "ιοντουσαν", "ιοσασταν", "ιοσαστε", "ιοσουν", "ιοσουνα", "ιοταν", "ιουμα", "ιουμαστε", "ιουνται", "ιουνταν", "η", "ηδεσ", "ηδων", "ηθει", "ηθεισ", "ηθειτε", "ηθηκατε", "ηθηκαν", "ηθουν", "ηθω", "ηκατε", "ηκαν", "ησ", "ησαν", "ησατε", "ησει", "ησεσ", "ησουν", "ησω", "ο", "οι", "ομαι", "ομασταν", "ομουν", "ομουνα", "ονται", "ονταν", "οντουσαν", "οσ", "οσασταν", "οσαστε", "οσουν", "οσουνα", "οταν", "ου", "ουμαι", "ουμαστε", "ουν", "ουνται", "ουνταν", "ουσ", "ουσαν", "ουσατε", "υ", "υσ", "ω", "ων"}
var grStep7_0 = []string{"εστερ", "εστατ", "οτερ", "οτατ", "υτερ", "υτατ", "ωτερ", "ωτατ"}
