// Package storage is the append-only JSON-lines log engine behind both of
// the service's stores. It knows nothing of users or sessions.
package storage
