package httpx

import (
	"fmt"
	"net/url"
	"strings"
)

// MaxFilterIDs is the most ids inIds or ninIds may each carry.
const MaxFilterIDs = 100

// maxIDLen bounds one id in a filter; no id of the service is longer.
const maxIDLen = 128

// Filter is a list filter from the inIds (include) and ninIds (exclude)
// query parameters.
type Filter struct {
	in  map[string]struct{}
	nin map[string]struct{}
}

// ParseFilter reads inIds and ninIds from q: comma-separated, empty
// entries ignored, each list at most MaxFilterIDs ids of at most 128 bytes.
// Both parameters may be repeated; their ids add up. A violation is a 400
// validation failure naming the parameter.
func ParseFilter(q url.Values) (Filter, error) {
	var f Filter
	var details []FieldError
	var err error
	if f.in, err = parseIDs(q["inIds"]); err != nil {
		details = append(details, FieldError{Field: "inIds", Message: err.Error()})
	}
	if f.nin, err = parseIDs(q["ninIds"]); err != nil {
		details = append(details, FieldError{Field: "ninIds", Message: err.Error()})
	}
	if details != nil {
		return Filter{}, Invalid(details...)
	}
	return f, nil
}

func parseIDs(values []string) (map[string]struct{}, error) {
	var set map[string]struct{}
	for _, v := range values {
		for len(v) > 0 {
			var id string
			id, v, _ = strings.Cut(v, ",")
			id = strings.TrimSpace(id)
			if id == "" {
				continue
			}
			if len(id) > maxIDLen {
				return nil, fmt.Errorf("an id is longer than %d bytes", maxIDLen)
			}
			if set == nil {
				set = make(map[string]struct{})
			}
			set[id] = struct{}{}
			if len(set) > MaxFilterIDs {
				return nil, fmt.Errorf("at most %d ids", MaxFilterIDs)
			}
		}
	}
	return set, nil
}

// Match reports whether id passes the filter: in inIds when inIds was
// given, and not in ninIds.
func (f Filter) Match(id string) bool {
	if f.in != nil {
		if _, ok := f.in[id]; !ok {
			return false
		}
	}
	_, excluded := f.nin[id]
	return !excluded
}

// IsZero reports whether the filter lets every id through.
func (f Filter) IsZero() bool { return f.in == nil && f.nin == nil }

// IDs returns the filter's lists: the ids inIds names (nil when it was not
// given) and those ninIds names, for a store that applies them itself.
func (f Filter) IDs() (in, nin []string) {
	for id := range f.in {
		in = append(in, id)
	}
	for id := range f.nin {
		nin = append(nin, id)
	}
	return in, nin
}
