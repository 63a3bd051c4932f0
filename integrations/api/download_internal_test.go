package api

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"searchsvc/httpx"
	"searchsvc/integrations/syncer"
)

// TestDownloadName: a name is saved as it reads: no directories, no
// control or format characters (a right-to-left override would make
// "invoice\u202Efdp.exe" read "invoiceexe.pdf"), cut before its
// extension.
func TestDownloadName(t *testing.T) {
	long := strings.Repeat("é", 100) + ".pdf"
	for _, tc := range []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"invoice\u202Efdp.exe", "invoicefdp.exe"},
		{"a\u2066b\u200Fc\u0085d\x07e.txt", "abcde.txt"},
		{"../../etc/passwd", ".._.._etc_passwd"},
		{`C:\Users\ann\q3.xlsx`, "C:_Users_ann_q3.xlsx"},
		{"  ", "fallback"},
		{"..", "fallback"},
		{"\xff\xfe", "fallback"},
		{long, strings.Repeat("é", 58) + ".pdf"},
	} {
		if got := downloadName(tc.in, "fallback"); got != tc.want {
			t.Errorf("downloadName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"application/PDF", "application/pdf"},
		{"text/html; charset=utf-8", "text/html"},
		{"garbage", "application/octet-stream"},
		{"", "application/octet-stream"},
	} {
		if got := attachmentType(tc.in); got != tc.want {
			t.Errorf("attachmentType(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMailTurns: one mail a person at a time, mailDownloads in all; a
// turn given back is taken again.
func TestMailTurns(t *testing.T) {
	m := newMailTurns()
	ctx := context.Background()
	releaseA, ok := m.take(ctx, "a")
	if !ok {
		t.Fatal("a: no turn")
	}
	if _, ok := m.take(ctx, "a"); ok {
		t.Error("a took a second turn")
	}
	releaseB, ok := m.take(ctx, "b")
	if !ok {
		t.Fatal("b: no turn")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := m.take(done, "c"); ok {
		t.Errorf("c took a third turn of %d", mailDownloads)
	}
	releaseA()
	releaseC, ok := m.take(ctx, "c")
	if !ok {
		t.Fatal("c: no turn once a's was given back")
	}
	releaseB()
	releaseC()
	if len(m.slots) != 0 || len(m.users) != 0 {
		t.Errorf("%d turns and %d people left", len(m.slots), len(m.users))
	}
}

// TestFetchFailedQuiet: what a failed fetch answers, and that its cause,
// which is logged, holds no path or address of the provider's error.
func TestFetchFailedQuiet(t *testing.T) {
	secret := &os.PathError{Op: "openat", Path: "medical/diagnosis.pdf", Err: os.ErrPermission}
	var he *httpx.Error
	err := fetchFailed(&syncer.FetchError{Message: "Folder: it failed.", Err: secret}, "file")
	if !errors.As(err, &he) || he.Status != http.StatusBadGateway || he.Code != "provider_failed" || he.Message != "Folder: it failed." {
		t.Fatalf("FetchError: %v", err)
	}
	if strings.Contains(he.Cause.Error(), "diagnosis") {
		t.Errorf("the cause names the file: %v", he.Cause)
	}
	err = fetchFailed(secret, "file")
	if !errors.As(err, &he) || he.Status != http.StatusInternalServerError || strings.Contains(he.Error(), "diagnosis") {
		t.Errorf("another error: %v", err)
	}
	if err := fetchFailed(&syncer.NeedsReauthError{Integration: "webdav"}, "file"); !errors.As(err, &he) || he.Status != http.StatusConflict ||
		he.Message != "the connection must be made again before anything can be downloaded from it" {
		t.Errorf("needs reauth: %v", err)
	}
}
