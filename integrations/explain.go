package integrations

// ExplainedError is a task failure that its integration puts in words for
// the user: the record's lastError shows Message instead of the
// scheduler's generic sentence. What the failure does to the record
// (retry with backoff, needs_reauth, drop) still follows Err, the error it
// wraps. Message must be safe to store and show: no password, token, or
// personal data (a folder name, an address).
type ExplainedError struct {
	Message string
	Err     error
}

func (e *ExplainedError) Error() string {
	if e.Err == nil {
		return e.Message
	}
	return e.Message + ": " + e.Err.Error()
}

func (e *ExplainedError) Unwrap() error { return e.Err }
