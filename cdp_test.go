package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// A small client of the Chrome DevTools Protocol over --remote-debugging-pipe:
// Chromium reads commands from its fd 3 and writes answers and events to its
// fd 4, each a JSON message ending in a NUL byte. One page target is
// attached in flat mode, so page commands carry its sessionId.

// chromeBin is the Chromium to drive: CHROME_BIN, else chromium on PATH.
func chromeBin() string {
	if b := os.Getenv("CHROME_BIN"); b != "" {
		return b
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// browser is one headless Chromium with one page.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	out     io.WriteCloser
	session string // the page's CDP session

	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpMessage
	// problems are what the page reported that a test of our own pages
	// must not see: uncaught exceptions and console errors and warnings.
	problems []string
	done     chan struct{}
	// sent are the requests the page made to the API, in the order it
	// made them: observed, never answered or changed by the test.
	sent []sentRequest
}

// sentRequest is one request the page sent, as Network.requestWillBeSent
// reports it.
type sentRequest struct {
	ID     string // the protocol's requestId, for Network.getResponseBody
	Method string
	URL    string
}

// cdpTimeout bounds one protocol command; it only turns a hung browser into
// a failure, it measures nothing.
const cdpTimeout = 30 * time.Second

// startBrowser starts headless Chromium on a fresh profile and attaches to
// a blank page of width×height CSS pixels.
func startBrowser(t *testing.T, bin string, width, height int) *browser {
	t.Helper()
	toChrome, chromeIn, err := os.Pipe() // chrome reads toChrome as fd 3
	if err != nil {
		t.Fatal(err)
	}
	chromeOut, fromChrome, err := os.Pipe() // chrome writes fromChrome as fd 4
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-extensions", "--disable-default-apps", "--mute-audio",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	toChrome.Close()
	fromChrome.Close()
	b := &browser{t: t, cmd: cmd, out: chromeIn, waiting: map[int]chan cdpMessage{}, done: make(chan struct{})}
	go b.read(chromeOut)
	t.Cleanup(func() {
		b.call("", "Browser.close", nil)
		chromeIn.Close()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		chromeOut.Close()
		if t.Failed() {
			t.Logf("chromium stderr (tail): %s", tail(stderr.String(), 2000))
		}
	})

	var target struct{ TargetID string }
	b.must("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct{ SessionID string }
	b.must("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	b.session = attached.SessionID
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		b.must(b.session, m, nil, nil)
	}
	b.must(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// read delivers answers to their callers and keeps the page's complaints.
func (b *browser) read(r io.Reader) {
	defer close(b.done)
	br := bufio.NewReader(r)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			c := b.waiting[m.ID]
			delete(b.waiting, m.ID)
			b.mu.Unlock()
			if c != nil {
				c <- m
			}
			continue
		}
		b.event(m)
	}
}

func (b *browser) event(m cdpMessage) {
	var problem string
	switch m.Method {
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string
				URL       string
				Exception struct{ Description string }
			}
		}
		json.Unmarshal(m.Params, &p)
		d := p.ExceptionDetails
		problem = "exception: " + d.Text + " " + d.Exception.Description + " at " + d.URL
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string
			Args []struct{ Value any }
		}
		json.Unmarshal(m.Params, &p)
		if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
			problem = fmt.Sprintf("console.%s: %v", p.Type, p.Args)
		}
	case "Network.requestWillBeSent":
		var p struct {
			RequestID string
			Request   struct{ URL, Method string }
		}
		json.Unmarshal(m.Params, &p)
		if strings.Contains(p.Request.URL, "/v1/") {
			b.mu.Lock()
			b.sent = append(b.sent, sentRequest{ID: p.RequestID, Method: p.Request.Method, URL: p.Request.URL})
			b.mu.Unlock()
		}
	case "Log.entryAdded":
		var p struct {
			Entry struct{ Source, Level, Text, URL string }
		}
		json.Unmarshal(m.Params, &p)
		e := p.Entry
		// A 401 or 404 the app asked for and handled is the network's
		// "error", not the page's.
		if e.Source != "network" && (e.Level == "error" || e.Level == "warning") {
			problem = "log " + e.Source + " " + e.Level + ": " + e.Text + " " + e.URL
		}
	}
	if problem != "" {
		b.mu.Lock()
		b.problems = append(b.problems, problem)
		b.mu.Unlock()
	}
}

// takeProblems returns and forgets what the page complained about so far.
func (b *browser) takeProblems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.problems
	b.problems = nil
	return p
}

// call sends one command and waits for its answer.
func (b *browser) call(session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.next++
	id := b.next
	c := make(chan cdpMessage, 1)
	b.waiting[id] = c
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if _, err := b.out.Write(append(raw, 0)); err != nil {
		return nil, fmt.Errorf("%s: write to chromium: %w", method, err)
	}
	select {
	case m := <-c:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		return m.Result, nil
	case <-b.done:
		return nil, fmt.Errorf("%s: chromium has exited", method)
	case <-time.After(cdpTimeout):
		return nil, fmt.Errorf("%s: no answer within %v", method, cdpTimeout)
	}
}

func (b *browser) must(session, method string, params, result any) {
	b.t.Helper()
	raw, err := b.call(session, method, params)
	if err != nil {
		b.t.Fatal(err)
	}
	if result != nil {
		if err := json.Unmarshal(raw, result); err != nil {
			b.t.Fatalf("%s: %v", method, err)
		}
	}
}

// eval runs a JavaScript expression in the page (awaiting a promise) and
// decodes its value into out (nil: ignore it).
func (b *browser) eval(expr string, out any) error {
	raw, err := b.call(b.session, "Runtime.evaluate", map[string]any{
		"expression": expr, "awaitPromise": true, "returnByValue": true})
	if err != nil {
		return err
	}
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("evaluate %q: %s %s", expr, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out == nil || len(r.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(r.Result.Value, out)
}

// waitFor polls a JavaScript condition until it is true. The deadline
// only bounds a failure; the test asserts nothing about time.
func (b *browser) waitFor(what, cond string) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		var ok bool
		err := b.eval("!!("+cond+")", &ok)
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			var text string
			b.eval("document.body ? document.body.innerText.slice(0, 800) : ''", &text)
			return fmt.Errorf("waited 20 s for %s (%s); err %v; the page shows:\n%s", what, cond, err, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// navigate loads url and waits for the document to be complete.
func (b *browser) navigate(url string) error {
	if _, err := b.call(b.session, "Page.navigate", map[string]any{"url": url}); err != nil {
		return err
	}
	return b.waitFor("the page to load", "document.readyState === 'complete' && location.href !== 'about:blank'")
}

// fill sets an input's value as typing would, firing input and change.
func (b *browser) fill(selector, value string) error {
	sel, _ := json.Marshal(selector)
	val, _ := json.Marshal(value)
	return b.eval(fmt.Sprintf(`(() => { const el = document.querySelector(%s);
		if (!el) throw new Error('no element ' + %s);
		el.focus(); el.value = %s;
		el.dispatchEvent(new Event('input', {bubbles: true}));
		el.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, sel, val), nil)
}

// click clicks the first element matching selector whose text contains
// text ("" for any).
func (b *browser) click(selector, text string) error {
	sel, _ := json.Marshal(selector)
	txt, _ := json.Marshal(text)
	return b.eval(fmt.Sprintf(`(() => { const el = [...document.querySelectorAll(%s)]
		.find(e => e.textContent.includes(%s));
		if (!el) throw new Error('nothing to click: ' + %s + ' with ' + %s);
		el.click(); })()`, sel, txt, sel, txt), nil)
}

// requests returns the API requests the page has sent so far whose path
// is path (the query string aside), oldest first.
func (b *browser) requests(path string) []sentRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []sentRequest
	for _, r := range b.sent {
		if u, err := url.Parse(r.URL); err == nil && u.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// responseBody returns the body the server answered to a request the page
// sent, as the browser received it.
func (b *browser) responseBody(req sentRequest) ([]byte, error) {
	raw, err := b.call(b.session, "Network.getResponseBody", map[string]any{"requestId": req.ID})
	if err != nil {
		return nil, err
	}
	var r struct {
		Body          string
		Base64Encoded bool
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	if r.Base64Encoded {
		return base64.StdEncoding.DecodeString(r.Body)
	}
	return []byte(r.Body), nil
}

// screenshot returns a PNG of the page as it shows.
func (b *browser) screenshot() ([]byte, error) {
	raw, err := b.call(b.session, "Page.captureScreenshot", map[string]any{"format": "png"})
	if err != nil {
		return nil, err
	}
	var r struct{ Data string }
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
		return nil, errors.New("Page.captureScreenshot did not answer a PNG")
	}
	return png, nil
}
