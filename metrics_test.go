package main

import (
	"testing"
	"time"
)

// TestObserveCounts: a request counts once by its route and status class,
// in the duration histogram, and for the login route by outcome; once a
// route has been seen, counting it allocates nothing.
func TestObserveCounts(t *testing.T) {
	m := newMetrics(t.TempDir())
	m.observe(loginPattern, 401, 30*time.Millisecond)
	m.observe(loginPattern, 200, 2*time.Second)
	m.observe("", 404, time.Millisecond)
	if n := testing.AllocsPerRun(100, func() { m.observe("GET /v1/user/profile", 200, time.Millisecond) }); n != 0 {
		t.Errorf("observe: got %v allocations a request, want 0", n)
	}
	got := map[string]float64{}
	for _, s := range m.requestFamily().Samples {
		got[s.Labels[0].Value+" "+s.Labels[1].Value] = s.Value
	}
	want := map[string]float64{"POST /v1/auth/login 4xx": 1, "POST /v1/auth/login 2xx": 1, "(unmatched) 4xx": 1, "GET /v1/user/profile 2xx": 101}
	if len(got) != len(want) {
		t.Errorf("requests: got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("requests %s: got %v, want %v", k, got[k], v)
		}
	}
	h := m.durations.Snapshot()
	if h.Count != 104 || h.Counts[2] != 102 || h.Counts[3] != 103 || h.Counts[7] != 103 || h.Counts[8] != 104 { // le 0.025, 0.05, 1, 2.5
		t.Errorf("durations: got %+v", h)
	}
	logins := map[string]float64{}
	for _, s := range m.loginFamily().Samples {
		logins[s.Labels[0].Value] = s.Value
	}
	if logins["ok"] != 1 || logins["failed"] != 1 || logins["throttled"] != 0 {
		t.Errorf("logins: got %v, want ok 1, failed 1, throttled 0", logins)
	}
}
