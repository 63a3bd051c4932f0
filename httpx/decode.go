package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// MaxBodyBytes caps every request body (1 MiB).
const MaxBodyBytes = 1 << 20

// Decode reads r's JSON body into v. It refuses a body over MaxBodyBytes
// (413), a Content-Type other than JSON (415), malformed JSON, unknown
// fields, and anything after the first value (400), all with the message
// "invalid request body". The caller's v is left partly filled on error
// and must not be used.
func Decode(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return &Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
				Message: "invalid request body", Cause: fmt.Errorf("content type %q", ct)}
		}
	}
	if r.ContentLength > MaxBodyBytes {
		// Refused on its declared size, before a byte is parsed.
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
			Message: "invalid request body", Cause: fmt.Errorf("Content-Length %d", r.ContentLength)}
	}
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		// One JSON value, then only white space.
		if _, err2 := dec.Token(); err2 != io.EOF {
			err = errors.New("data after the JSON value")
		}
	}
	if err == nil {
		return nil
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
			Message: "invalid request body", Cause: err}
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("empty body")
	}
	return BadBody(err)
}

// CSRFField is embedded in request bodies of session-protected endpoints so
// that the csrfToken a client sends in the body is a known field.
type CSRFField struct {
	CSRFToken string `json:"csrfToken,omitempty"`
}
