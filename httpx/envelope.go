package httpx

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Field is one top-level member of a response body, after the envelope's
// own requestId, timestamp, duration and operation.
type Field struct {
	Key   string
	Value any
}

// F is shorthand for a Field.
func F(key string, value any) Field { return Field{key, value} }

// One writes a read-one response: the record under result.
func One(w http.ResponseWriter, r *http.Request, op string, result any, extra ...Field) {
	Write(w, r, http.StatusOK, op, append([]Field{F("result", result)}, extra...)...)
}

// Many writes a read-many response: the records under results, and count.
// A nil slice is written as [], never null.
func Many[T any](w http.ResponseWriter, r *http.Request, op string, results []T) {
	if results == nil {
		results = []T{}
	}
	Write(w, r, http.StatusOK, op, F("results", results), F("count", len(results)))
}

// jsonContentType is shared by every response; net/http never changes it.
var jsonContentType = []string{"application/json"}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Write writes a JSON response in the envelope: requestId, timestamp,
// duration and operation, then the fields in the order given. Every JSON
// response of the service, errors included, is written here.
func Write(w http.ResponseWriter, r *http.Request, status int, op string, fields ...Field) {
	info := InfoFrom(r)
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() {
		buf.Reset()
		bufPool.Put(buf)
	}()
	now := info.now()
	buf.WriteString(`{"requestId":"`)
	buf.WriteString(info.ID)
	buf.WriteString(`","timestamp":"`)
	buf.Write(now.UTC().AppendFormat(buf.AvailableBuffer(), "2006-01-02T15:04:05.000Z07:00"))
	buf.WriteString(`","duration":`)
	buf.Write(strconv.AppendFloat(buf.AvailableBuffer(), float64(now.Sub(info.Start))/float64(time.Millisecond), 'f', 3, 64))
	buf.WriteString(`,"operation":`)
	writeJSONString(buf, op)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	for _, f := range fields {
		buf.WriteByte(',')
		writeJSONString(buf, f.Key)
		buf.WriteByte(':')
		if err := enc.Encode(f.Value); err != nil {
			// A value that cannot be encoded is a programming error; the
			// client gets a 500 rather than half a body.
			info.logger().Error("encode response", "request_id", info.ID, "operation", op, "err", err)
			writeInternal(w, r, op)
			return
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	buf.WriteString("}\n")
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(buf.Len())}
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func writeInternal(w http.ResponseWriter, r *http.Request, op string) {
	e := Internal(nil)
	Write(w, r, e.Status, op, F("error", errorBody{Code: e.Code, Message: e.Message}))
}

// writeJSONString writes s as a JSON string. Keys and operation names are
// plain ASCII and are written as they are; anything else goes through
// encoding/json.
func writeJSONString(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			buf.Write(b)
			return
		}
	}
	buf.WriteByte('"')
	buf.WriteString(s)
	buf.WriteByte('"')
}

type errorBody struct {
	Code    string       `json:"code"`
	Message string       `json:"message"`
	Details []FieldError `json:"details,omitempty"`
}

// WriteError is the one place that turns an error into a response: the
// status and the client-safe code and message of AsError(err), under
// error, in the envelope. 5xx causes are logged here, once; their text
// never reaches the client.
func WriteError(w http.ResponseWriter, r *http.Request, op string, err error) {
	e := AsError(err)
	info := InfoFrom(r)
	if e.Status >= 500 && e.Code != "busy" {
		info.logger().Error("request failed", "request_id", info.ID, "operation", op, "status", e.Status, "err", e.Cause)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64((e.RetryAfter+time.Second-1)/time.Second), 10))
	}
	Write(w, r, e.Status, op, F("error", errorBody{Code: e.Code, Message: e.Message, Details: e.Details}))
}

// discardLogger is used where a request did not pass through Handler
// (a handler tested on its own).
var discardLogger = slog.New(slog.DiscardHandler)
