package main

import (
	"fmt"
	"strings"
)

// completionsJS lists the completions under the search box as shown:
// each one's text, the kind's label first.
const completionsJS = `(() => { const l = document.querySelector('#q-completions');
	return l && !l.hidden ? [...l.querySelectorAll('li')].map(li => li.textContent) : []; })()`

// completionsWhileTyping is TestBrowser's step for suggestions while
// typing (GET /v1/search/suggest): typing part of a word lists titles and
// words of the person's items under the box; the arrow keys move through
// them, Escape closes the list and leaves the focus in the box, Enter
// searches the one chosen; a title that holds markup is listed as text.
func (w *webTest) completionsWhileTyping() error {
	b := w.b
	if err := b.navigate(w.base + "/search"); err != nil {
		return err
	}
	if err := b.waitFor("the search box", `document.querySelector('#q')`); err != nil {
		return err
	}
	regat := []string{"subjectRe: regatta dinner on Saturday", "subjectWinter regatta series announced",
		"subjectCrew list for the regatta", "regatta"}
	if err := b.fill("#q", "regat"); err != nil {
		return err
	}
	if err := w.waitValue("the completions of regat", completionsJS, regat); err != nil {
		return err
	}
	active := `document.querySelector('#q').getAttribute('aria-activedescendant') + ' ' +
		[...document.querySelectorAll('#q-completions li.active')].map(li => li.textContent).join()`
	for i, k := range []struct{ key, want string }{
		{"ArrowDown", "q-completion-0 " + regat[0]},
		{"ArrowDown", "q-completion-1 " + regat[1]},
		{"ArrowUp", "q-completion-0 " + regat[0]},
		{"ArrowUp", "q-completion-3 " + regat[3]},
	} {
		if err := w.key(k.key); err != nil {
			return err
		}
		if err := w.eq(fmt.Sprintf("the chosen completion after key %d (%s)", i+1, k.key), active, k.want); err != nil {
			return err
		}
	}
	if err := w.key("Escape"); err != nil {
		return err
	}
	if err := w.eq("after Escape", `document.querySelector('#q-completions').hidden + ' ' + document.activeElement.id + ' ' + document.querySelector('#q').value`,
		"true q regat"); err != nil {
		return err
	}
	if err := b.fill("#q", "regat"); err != nil {
		return err
	}
	if err := w.waitValue("the completions again", completionsJS, regat); err != nil {
		return err
	}
	for _, k := range []string{"ArrowUp", "Enter"} { // the last: the word
		if err := w.key(k); err != nil {
			return err
		}
	}
	if err := b.waitFor("the chosen search", `location.search === '?q=regatta'`); err != nil {
		return err
	}
	// The page before listed recent items: wait for the new page's count.
	if err := b.waitFor("the results of the chosen word", `(document.querySelector('main .count') || {}).textContent === '4 results for regatta'`); err != nil {
		return err
	}

	// Markup in a title is a title's text, nothing more.
	if err := b.fill("#q", "quok"); err != nil {
		return err
	}
	if err := w.waitValue("the completions of quok", completionsJS, []string{"subject" + strings.Join(strings.Fields(hostileTitle), " "), "quokka"}); err != nil {
		var answer string
		b.eval(`fetch('/v1/search/suggest?q=quok').then(r => r.text())`, &answer)
		return fmt.Errorf("%w; the API answers %s", err, answer)
	}
	var pwned bool
	if err := b.eval(`window.__pwned !== undefined || document.querySelectorAll('#q-completions script, #q-completions img, [onerror]').length > 0`, &pwned); err != nil {
		return err
	}
	if pwned {
		return fmt.Errorf("a completion's markup ran or became elements")
	}
	return nil
}

// key presses a key of the completions list (an arrow, Enter or Escape)
// as a person does, down and up, through DevTools.
func (w *webTest) key(key string) error {
	vk := map[string]int{"ArrowDown": 40, "ArrowUp": 38, "Enter": 13, "Escape": 27}[key]
	if vk == 0 {
		return fmt.Errorf("key: no key %q", key)
	}
	down := map[string]any{"type": "keyDown", "key": key, "code": key, "windowsVirtualKeyCode": vk}
	if key == "Enter" {
		down["text"] = "\r"
	}
	if _, err := w.b.call(w.b.session, "Input.dispatchKeyEvent", down); err != nil {
		return err
	}
	_, err := w.b.call(w.b.session, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": key, "windowsVirtualKeyCode": vk})
	return err
}
