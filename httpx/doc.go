// Package httpx holds the service's HTTP conventions: the response envelope,
// the error type and the one place that turns errors into JSON, request
// decoding, request ids, client addresses, the inIds/ninIds filters, and the
// middleware that every request passes through. It imports only the standard
// library.
package httpx
