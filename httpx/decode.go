package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBodyBytes caps every request body (1 MiB).
const MaxBodyBytes = 1 << 20

// Decode reads r's JSON body into v. It refuses a Content-Type other than
// application/json, a missing one included (415: what a cross-site form or
// a no-cors fetch sends), a body over MaxBodyBytes (413), bytes that are
// not UTF-8 or a \u escape of half a surrogate pair (400: the decoder
// would turn each into U+FFFD, so two different passwords would become
// one), malformed JSON, unknown fields, and anything after the first value
// (400), all with the message "invalid request body". The caller's v is
// left partly filled on error and must not be used.
func Decode(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		return unsupportedType(ct)
	}
	if r.ContentLength > MaxBodyBytes {
		// Refused on its declared size, before a byte is parsed.
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
			Message: "invalid request body", Cause: fmt.Errorf("Content-Length %d", r.ContentLength)}
	}
	// The decoder buffers the whole value anyway; reading it first lets
	// the text be checked before a field is filled.
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
			Message: "invalid request body", Cause: err}
	}
	if err != nil {
		return BadBody(err)
	}
	if err := checkText(b); err != nil {
		return BadBody(err)
	}
	if err := checkKeys(b); err != nil {
		return BadBody(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		// One JSON value, then only white space.
		if _, err2 := dec.Token(); err2 != io.EOF {
			err = errors.New("data after the JSON value")
		}
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("empty body")
	}
	return BadBody(err)
}

// checkContentType is the content-type half of the rule Handler applies
// to every unsafe request: a Content-Type, when sent, is application/json,
// and a request with a body (a Content-Length other than 0, or a
// Transfer-Encoding) sends one. A request without a body may omit it.
func checkContentType(r *http.Request) error {
	ct, sent := r.Header["Content-Type"]
	hasBody := r.ContentLength != 0 || len(r.TransferEncoding) > 0
	switch {
	case sent && (len(ct) != 1 || !isJSON(ct[0])):
		return unsupportedType(r.Header.Get("Content-Type"))
	case !sent && hasBody:
		return unsupportedType("")
	}
	return nil
}

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// unsupportedType is the 415 of a Content-Type ct that is not JSON.
func unsupportedType(ct string) *Error {
	return &Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
		Message: "invalid request body", Cause: fmt.Errorf("content type %q", ct)}
}

// checkText refuses what encoding/json would silently replace by U+FFFD:
// bytes that are not UTF-8, and a \u escape of a surrogate that is not
// half of a pair. Anything else malformed is left to the decoder.
func checkText(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("not UTF-8")
	}
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(b):
			if b[i+1] != 'u' {
				i++ // a one-letter escape, \" and \\ included
				continue
			}
			r1, ok := hex4(b, i+2)
			i += 5
			switch {
			case !ok || r1 < 0xD800 || r1 > 0xDFFF:
				continue
			case r1 >= 0xDC00:
				return errors.New("a lone low surrogate escape")
			}
			if i+6 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return errors.New("a lone high surrogate escape")
			}
			if r2, ok := hex4(b, i+3); !ok || r2 < 0xDC00 || r2 > 0xDFFF {
				return errors.New("a lone high surrogate escape")
			}
			i += 6
		}
	}
	return nil
}

// checkKeys refuses an object that names a key twice. Keys are compared
// as the decoder matches them to fields, unescaped and without regard to
// case ("email", "Email" and "em\u0061il" are one key). What is not
// well-formed is left to the decoder.
func checkKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	type level struct {
		object bool
		keys   map[string]struct{}
		atKey  bool // the next string token is a key
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok {
			if top >= 0 && stack[top].object {
				stack[top].atKey = true // the value was this container
			}
			switch d {
			case '{':
				stack = append(stack, level{object: true, atKey: true})
			case '[':
				stack = append(stack, level{})
			default:
				stack = stack[:top]
			}
			continue
		}
		if top < 0 || !stack[top].object {
			continue
		}
		l := &stack[top]
		if !l.atKey {
			l.atKey = true // a scalar value; a key comes next
			continue
		}
		key, _ := tok.(string)
		k := foldKey(key)
		if _, dup := l.keys[k]; dup {
			return fmt.Errorf("key %q twice in one object", key)
		}
		if l.keys == nil {
			l.keys = make(map[string]struct{})
		}
		l.keys[k] = struct{}{}
		l.atKey = false
	}
}

// foldKey maps key to one spelling of its case-folding class, so that
// keys the decoder takes for one field compare equal.
func foldKey(key string) string {
	return strings.Map(func(r rune) rune {
		lo := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			lo = min(lo, f)
		}
		return lo
	}, key)
}

// hex4 reads four hex digits at b[i:], as a \u escape holds.
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
