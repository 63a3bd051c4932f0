package search

import "fmt"

// QueryError is a query that cannot be parsed: what is wrong and the byte
// offset in the query where it was found.
type QueryError struct {
	Pos int
	Msg string
}

func (e *QueryError) Error() string { return fmt.Sprintf("%s at %d", e.Msg, e.Pos) }

// Parse parses a query of the query language into a tree.
func Parse(q string) (Node, error) {
	var terms []Node
	Analyze(q, func(t Token) { terms = append(terms, Term{Field: FieldAny, Text: t.Term}) })
	if len(terms) == 0 {
		return nil, &QueryError{Pos: 0, Msg: "empty query"}
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return And{Children: terms}, nil
}
