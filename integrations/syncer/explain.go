package syncer

import (
	"errors"

	"searchsvc/integrations"
)

// explained returns the sentence an integration gave a task's failure
// (an *integrations.ExplainedError in err's chain), else msg, the one
// classify made.
func explained(err error, msg string) string {
	var ee *integrations.ExplainedError
	if errors.As(err, &ee) && ee.Message != "" {
		return ee.Message
	}
	return msg
}
