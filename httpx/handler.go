package httpx

import "net/http"

// HandlerFunc is the service's one handler shape: it writes its answer
// and returns nil, or returns an error and writes nothing. The adapter
// (Handle) writes the error in the envelope, so no handler repeats it.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Endpoint is a HandlerFunc with its operation name, the envelope's
// "operation" for its answers and its errors. Middleware in front of it
// (auth's session check) answers its own errors under the same name
// (see OperationOf).
type Endpoint struct {
	Op string
	Fn HandlerFunc
}

// Handle returns fn as an http.Handler answering under op.
func Handle(op string, fn HandlerFunc) *Endpoint { return &Endpoint{Op: op, Fn: fn} }

// ServeHTTP runs the handler and writes the error it returns, if any,
// with WriteError: its status and client-safe message, the cause of a
// 5xx logged once.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := e.Fn(w, r); err != nil {
		WriteError(w, r, e.Op, err)
	}
}

// OperationOf returns the operation name of h when h is an Endpoint, and
// fallback otherwise (a plain handler of the standard library, say).
func OperationOf(h http.Handler, fallback string) string {
	if e, ok := h.(*Endpoint); ok {
		return e.Op
	}
	return fallback
}
