package integrations

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"searchsvc/integrations/textguard"
)

// MaxFieldBytes bounds one value of a manual form. It is generous enough
// for a PEM certificate and small enough that a form cannot fill memory.
const MaxFieldBytes = 16 << 10

// maxUnknownFields bounds how many unknown names CheckForm reports.
const maxUnknownFields = 10

// CheckForm checks a submitted manual form against the manifest's fields
// before anything reaches the provider: every name must be a field of the
// form, values must be JSON strings, numbers or booleans that fit the
// field's type, and required fields must be set once defaults are applied.
// It returns the values as strings (numbers as sent, booleans as "true" or
// "false", text trimmed of surrounding space except in password fields),
// or one *ValidationError per offending field, in the manifest's order.
// Messages never quote a value.
func (m Manifest) CheckForm(raw map[string]json.RawMessage) (map[string]string, []*ValidationError) {
	var errs []*ValidationError
	known := make(map[string]bool, len(m.Fields))
	for _, f := range m.Fields {
		known[f.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		if !known[name] {
			errs = append(errs, &ValidationError{Field: strings.ToValidUTF8(textguard.Truncate(name, 64), ""), Message: "is not a field of this form"})
			if len(errs) == maxUnknownFields {
				break // a flood of junk names gets a bounded answer
			}
		}
	}
	out := make(map[string]string, len(m.Fields))
	for _, f := range m.Fields {
		v, ok, msg := formValue(raw[f.Name])
		if msg == "" && ok {
			v, msg = checkValue(f, v)
		}
		if msg == "" && v == "" && f.Default != "" {
			v = f.Default
		}
		if msg == "" && v == "" && f.Required {
			msg = "is required"
		}
		if msg != "" {
			errs = append(errs, &ValidationError{Field: f.Name, Message: msg})
			continue
		}
		if v != "" {
			out[f.Name] = v
		}
	}
	if errs != nil {
		return nil, errs
	}
	return out, nil
}

// formValue decodes one JSON value of a form: a string, a number or a
// boolean; null and absence are empty. ok is false for an empty value.
func formValue(raw json.RawMessage) (v string, ok bool, msg string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, ""
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", false, "must be a string, a number or a boolean"
		}
		return v, v != "", ""
	case 't', 'f':
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return "", false, "must be a string, a number or a boolean"
		}
		return strconv.FormatBool(b), true, ""
	case '{', '[':
		return "", false, "must be a string, a number or a boolean"
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", false, "must be a string, a number or a boolean"
	}
	return n.String(), true, ""
}

// checkValue checks v against f's type and normalises it.
func checkValue(f Field, v string) (string, string) {
	if len(v) > MaxFieldBytes {
		return "", "must be at most " + strconv.Itoa(MaxFieldBytes) + " bytes"
	}
	if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return "", "must be valid text"
	}
	if f.Type != FieldPassword {
		v = strings.TrimSpace(v)
	}
	if v == "" {
		return "", ""
	}
	switch f.Type {
	case FieldNumber:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return "", "must be a number"
		}
	case FieldBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", "must be true or false"
		}
		v = strconv.FormatBool(b)
	case FieldURL:
		u, err := url.Parse(v)
		if err != nil || !u.IsAbs() || u.Host == "" {
			return "", "must be an absolute URL"
		}
	}
	return v, ""
}
