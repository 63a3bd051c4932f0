package httpx

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"time"

	"searchsvc/storage/uuid"
)

// Info is what the outermost handler learns about a request before any
// route runs: its id, when it started and who sent it.
type Info struct {
	ID       string
	Start    time.Time
	ClientIP netip.Addr // the client's address, proxies resolved as TRUSTED_PROXIES allows

	// Principal is who the request authenticated as, set by the session
	// middleware (package auth reads and writes it). Keeping it here, in
	// the Info every request already carries, spares that middleware a
	// second context value and a second copy of the request.
	Principal any

	clock func() time.Time
	log   *slog.Logger
}

func (i *Info) now() time.Time {
	if i.clock == nil {
		return time.Now()
	}
	return i.clock()
}

func (i *Info) logger() *slog.Logger {
	if i.log == nil {
		return discardLogger
	}
	return i.log
}

type infoKey struct{}

// InfoFromContext returns the Info that Handler attached to ctx, if any.
func InfoFromContext(ctx context.Context) (*Info, bool) {
	i, ok := ctx.Value(infoKey{}).(*Info)
	return i, ok
}

// InfoFrom returns the request's Info. A request that did not pass through
// Handler (a handler under test on its own) gets a fresh one.
func InfoFrom(r *http.Request) *Info {
	if i, ok := r.Context().Value(infoKey{}).(*Info); ok {
		return i
	}
	return &Info{ID: uuid.New(), Start: time.Now()}
}

// Config configures Handler.
type Config struct {
	Logger         *slog.Logger
	Now            func() time.Time // time.Now when nil
	TrustedProxies []netip.Prefix   // peers whose X-Forwarded-For is believed
	// Observe, when set, is told about every finished request: its route
	// pattern ("" when none matched), status, and the time from its start
	// to the end of its handling on Now's clock. It feeds the metrics.
	Observe func(pattern string, status int, elapsed time.Duration)
	// TrustedOrigins are origins ("https://app.example.org") other than
	// the service's own whose unsafe requests are accepted: the frontend,
	// when it lives elsewhere. Every other cross-origin POST, PUT, PATCH
	// or DELETE is refused (see Handler).
	TrustedOrigins []string
	// BodyBytesInFlight bounds the request-body bytes all requests may
	// hold at once, BodyBytesPerClient those of one client (an IPv4
	// address or IPv6 /64, twice that for a /56, four times for a /48;
	// 0: an eighth of BodyBytesInFlight), and BodyBytesReserve is kept for
	// small bodies (a sixteenth of it or less) of clients holding none and
	// with few body bytes in the last minutes (0: an eighth; negative:
	// none); a request with a body that does not fit is answered 503 with
	// Retry-After, unread. 0: no bound. Config.Now is the clock of the
	// clients' recent bytes.
	BodyBytesInFlight  int64
	BodyBytesPerClient int64
	BodyBytesReserve   int64
	// AccessLogDelay, when positive, lets access lines wait up to this long
	// to be written together (see Stack.FlushAccessLog); zero writes each
	// as its request ends.
	AccessLogDelay time.Duration
	// AccessLog says which requests get a line (ACCESS_LOG); the zero
	// value is AccessLogSummary. SlowRequest is the duration from which a
	// request gets its line in that mode; 0: DefaultSlowRequest.
	AccessLog   AccessLogMode
	SlowRequest time.Duration
	// NotFound, when set, answers a GET or HEAD that no route matches in
	// place of the JSON 404: the web app's page for a person who mistyped
	// an address. It answers a request that is no browser's page load
	// (one under /v1/, or one that does not accept HTML) itself, as the
	// API does.
	NotFound http.Handler
}

// Handler wraps the service's mux in what every request needs: a request
// id (also sent as X-Request-Id), the client address, security headers,
// panic recovery, JSON 404 and 405 answers instead of the mux's plain
// text, and one access log line. The log line carries the route pattern,
// never the raw path, cookies or bodies.
//
// Every unsafe request (POST, PUT, PATCH, DELETE) meets one rule before
// any route runs (docs/security.md, "Cross-origin requests and CSRF"):
//   - from another origin it is refused with 403 "cross-origin request
//     refused": Sec-Fetch-Site must not say cross-site or same-site
//     (unless Origin is one of TrustedOrigins), and an Origin, when sent,
//     must be the request's Host or one of TrustedOrigins, whatever
//     Sec-Fetch-Site says. A client that is no browser sends neither.
//     SameSite=Strict keeps the session cookie from other sites, but a
//     sibling subdomain is the same site; this check stops it, whether
//     or not CSRF tokens are on.
//   - a Content-Type, when sent, must be application/json, and a body
//     needs one (415 "invalid request body"): what a form or a no-cors
//     fetch sends never reaches a route, body or not.
//
// An invalid TrustedOrigins entry is an error.
func Handler(mux *http.ServeMux, cfg Config) (*Stack, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = discardLogger
	}
	cop := http.NewCrossOriginProtection()
	trusted := make(map[string]struct{}, len(cfg.TrustedOrigins))
	for _, o := range cfg.TrustedOrigins {
		// As a browser writes it: a BASE_URL of https://Search.example.org:443
		// is the origin https://search.example.org.
		o = canonOrigin(o)
		if err := cop.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("httpx: TrustedOrigins: %w", err)
		}
		trusted[o] = struct{}{}
	}
	s := &Stack{mux: mux, cfg: cfg, cop: cop, trusted: trusted, log: accessLog{h: cfg.Logger.Handler(), delay: cfg.AccessLogDelay,
		mode: cfg.AccessLog, slow: cmp.Or(cfg.SlowRequest, DefaultSlowRequest)}}
	if cfg.AccessLog == AccessLogSummary {
		s.log.sum = &summary{h: s.log.h, now: cfg.Now}
	}
	if cfg.BodyBytesInFlight > 0 {
		s.bodies = newBodyBudget(cfg.BodyBytesInFlight, cmp.Or(cfg.BodyBytesPerClient, cfg.BodyBytesInFlight/8),
			cmp.Or(cfg.BodyBytesReserve, cfg.BodyBytesInFlight/8), cfg.Now)
	}
	return s, nil
}

// Stack is the handler Handler returns.
type Stack struct {
	mux     *http.ServeMux
	cfg     Config
	cop     *http.CrossOriginProtection
	trusted map[string]struct{} // Config.TrustedOrigins, as checkOrigin looks them up
	log     accessLog

	bodies *bodyBudget // nil: no bound
}

// CrossOrigin is the answer to an unsafe request from another origin.
func CrossOrigin(cause error) *Error {
	return &Error{Status: http.StatusForbidden, Code: "cross_origin", Message: "cross-origin request refused", Cause: cause}
}

// FlushAccessLog writes the access lines still waiting (Config.AccessLogDelay)
// and returns when they are written. Call it once the server has shut down.
func (s *Stack) FlushAccessLog() { s.log.flush() }

func (s *Stack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// One allocation for both: the request's Info and its writer.
	st := &struct {
		info Info
		sw   statusWriter
	}{
		info: Info{
			ID:       uuid.New(),
			Start:    s.cfg.Now(),
			ClientIP: ClientIP(r, s.cfg.TrustedProxies),
			clock:    s.cfg.Now,
			log:      s.cfg.Logger,
		},
	}
	info, sw := &st.info, &st.sw
	r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
	*sw = statusWriter{ResponseWriter: w, req: r, status: http.StatusOK}
	h := w.Header()
	h["X-Request-Id"] = []string{info.ID}
	for _, kv := range securityHeaders {
		h[kv.key] = kv.value // canonical keys, shared read-only values: no work per request
	}

	defer func() { s.finish(recover(), r, info, sw) }()

	if unsafeMethod(r.Method) {
		if err := s.checkOrigin(r); err != nil {
			WriteError(sw, r, "request.origin", CrossOrigin(err))
			return
		}
		if err := checkContentType(r); err != nil {
			WriteError(sw, r, "request.body", err)
			return
		}
	}
	if n := bodySize(r); n > 0 && s.bodies != nil {
		if !s.bodies.take(info.ClientIP, n) {
			// Refused unread: closing the connection spares net/http
			// draining the body to reuse it.
			h.Set("Connection", "close")
			WriteError(sw, r, "request.body", Busy())
			return
		}
		defer s.bodies.release(info.ClientIP, n)
		// A client that declares a body and does not send it would hold
		// its reservation: the body must arrive in bodyReadTime. A socket
		// deadline is on the system clock, not cfg.Now.
		http.NewResponseController(sw).SetReadDeadline(time.Now().Add(bodyReadTime(n)))
		r.Body = http.MaxBytesReader(sw, r.Body, n) // no one reads past what was reserved
	}
	s.mux.ServeHTTP(sw, r)
	if sw.fallback != 0 {
		s.noRoute(sw, r)
	}
}

// noRoute answers a request the mux found no route for: Config.NotFound
// serves a GET or HEAD it would answer 404, when set; anything else gets
// the mux's status in JSON, keeping its Allow header.
func (s *Stack) noRoute(sw *statusWriter, r *http.Request) {
	if sw.fallback == http.StatusNotFound && s.cfg.NotFound != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		sw.fallback, sw.direct = 0, true
		sw.ResponseWriter.Header().Del("Content-Type")
		s.cfg.NotFound.ServeHTTP(sw, r)
		return
	}
	sw.ResponseWriter.Header().Del("Content-Type")
	var e *Error
	if sw.fallback == http.StatusMethodNotAllowed {
		e = &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Message: "method not allowed"}
	} else {
		e = NotFound("not found")
	}
	WriteError(sw.ResponseWriter, r, "route.match", e)
	sw.status = e.Status
}

// finish ends a request's handling, deferred: a panic p (nil: none) is
// logged with its stack and answered 500 if nothing was written yet, and
// the request goes to the access log and to Config.Observe.
func (s *Stack) finish(p any, r *http.Request, info *Info, sw *statusWriter) {
	if p != nil {
		if p == http.ErrAbortHandler {
			panic(p)
		}
		s.cfg.Logger.Error("panic serving request", "request_id", info.ID, "method", r.Method,
			"pattern", r.Pattern, "panic", p, "stack", string(debug.Stack()))
		if !sw.wrote {
			WriteError(sw.ResponseWriter, r, "internal", Internal(nil))
			sw.status = http.StatusInternalServerError
		}
	}
	pattern := r.Pattern
	if pattern == "" {
		pattern = "(unmatched)"
	}
	end := s.cfg.Now()
	s.log.request(r.Context(), info, end, r.Method, pattern, sw.status)
	if s.cfg.Observe != nil {
		s.cfg.Observe(r.Pattern, sw.status, end.Sub(info.Start))
	}
}

// securityHeaders go on every response: no sniffing (so a JSON answer is
// never read as a page or a script), no caching of personal data, a CSP
// that forbids everything including framing should a browser render an
// answer anyway, and no cross-origin embedding. Headers that only matter
// for HTML documents (Referrer-Policy, base-uri, form-action) are left out,
// as is X-Frame-Options, which frame-ancestors supersedes in every browser
// with CSP level 2: each costs every response its bytes and every client
// its parsing, and with X-Request-Id, Content-Type, Content-Length and a
// possible Set-Cookie the set stays within the 8 entries that net/http's
// header map (and the copy it makes of it at WriteHeader) holds without
// growing.
var securityHeaders = [...]struct {
	key   string
	value []string
}{
	{"X-Content-Type-Options", []string{"nosniff"}},
	{"Cache-Control", []string{"no-store"}},
	{"Content-Security-Policy", []string{"default-src 'none'; frame-ancestors 'none'"}},
	{"Cross-Origin-Resource-Policy", []string{"same-origin"}},
}

// statusWriter records the status for the access log and catches the
// mux's own plain-text 404 and 405, which it writes only when no pattern
// matched (r.Pattern is empty), so that Handler can answer in JSON.
type statusWriter struct {
	http.ResponseWriter
	req      *http.Request
	status   int
	wrote    bool
	fallback int
	direct   bool // the NotFound handler answers: its 404 is not the mux's
}

func (w *statusWriter) WriteHeader(code int) {
	if w.wrote || w.fallback != 0 {
		return
	}
	if w.req.Pattern == "" && !w.direct && (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) {
		w.fallback = code
		return
	}
	w.wrote = true
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.fallback != 0 {
		return len(b), nil // the mux's plain text, replaced by JSON
	}
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
