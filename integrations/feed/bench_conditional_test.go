package feed_test

import (
	"testing"

	"searchsvc/integrations"
	"searchsvc/integrations/feed"
	"searchsvc/integrations/syncer/syncfx"
)

// BenchmarkSecondPollUnchanged polls a feed whose server supports ETags
// once, then measures the polls after it: each sends the ETag back and
// is answered 304. body-bytes/poll is what those polls transferred of
// the feed's body (which should be 0).
func BenchmarkSecondPollUnchanged(b *testing.B) {
	site := newEtagSite(b, atomFeed)
	fx := syncfx.New(b, syncfx.Options{Definition: feed.Definition(), Client: site.Client()})
	rec := fx.Connect("u1", integrations.Credentials{Fields: map[string]string{feed.FieldURL: site.URL + "/feed.xml"}})
	fx.Sync(rec)
	reqs0, bytes0 := site.counts()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		fx.Sync(rec)
	}
	b.StopTimer()
	reqs, n := site.counts()
	if len(reqs)-len(reqs0) != b.N {
		b.Fatalf("%d polls made %d requests", b.N, len(reqs)-len(reqs0))
	}
	b.ReportMetric(float64(n-bytes0)/float64(b.N), "body-bytes/poll")
	b.ReportMetric(float64(bytes0), "first-poll-body-bytes")
}
