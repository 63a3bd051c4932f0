package api

import "testing"

// TestYielderSteps: the search route's yielder yields once every
// `every` steps, so a page of 100 snippets yields 12 times at 8 a
// yield; the route never yielded between snippets.
func TestYielderSteps(t *testing.T) {
	yields := 0
	y := yielder{every: yieldResults, yield: func() { yields++ }}
	for i := range 100 {
		y.step()
		if want := (i + 1) / yieldResults; yields != want {
			t.Fatalf("after %d steps: %d yields, want %d", i+1, yields, want)
		}
	}
	if yields != 12 {
		t.Fatalf("a page of 100: %d yields, want 12", yields)
	}
}
