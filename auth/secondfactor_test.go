package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"searchsvc/auth/totp"
)

// wantCode checks an error answer's status, code and message.
func (r *response) wantCode(t testing.TB, status int, code, message string) {
	t.Helper()
	if got, _ := r.field("error", "code").(string); r.status != status || got != code || r.errMessage() != message {
		t.Fatalf("got %d %s %q, want %d %s %q (body %s)", r.status, got, r.errMessage(), status, code, message, r.raw)
	}
	if r.cookie != nil && r.cookie.Value != "" {
		t.Fatalf("an error answer set a session cookie")
	}
}

// wantDetail checks a 400 validation answer with one detail.
func (r *response) wantDetail(t testing.TB, field, message string) {
	t.Helper()
	r.wantCode(t, http.StatusBadRequest, "validation_failed", "validation failed")
	if d := r.details(); len(d) != 1 || d[field] != message {
		t.Fatalf("got details %v, want %s: %s", d, field, message)
	}
}

// totpSecret decodes the secret of an enrolment answer.
func totpSecret(t testing.TB, r *response) []byte {
	t.Helper()
	s, _ := r.body["secret"].(string)
	secret, err := totp.Encoding.DecodeString(s)
	if err != nil || len(secret) != totp.SecretSize {
		t.Fatalf("secret %q: %d bytes, %v", s, len(secret), err)
	}
	return secret
}

// codeAt is the code of secret at the env's clock, shifted by steps.
func (e *testEnv) codeAt(secret []byte, steps int64) string {
	return totp.Code(secret, totp.Step(e.clock.Now())+steps)
}

// enableTOTP turns c's second factor on and returns its secret and
// recovery codes. The clock moves one period on, so the confirming code
// is not the next login's.
func (e *testEnv) enableTOTP(c *client) ([]byte, []string) {
	e.t.Helper()
	r := c.do("POST", "/v1/user/totp", map[string]string{"currentPassword": testPassword})
	r.wantStatus(e.t, http.StatusOK)
	secret := totpSecret(e.t, r)
	r = c.do("POST", "/v1/user/totp/confirm", map[string]string{"code": e.codeAt(secret, 0)})
	r.wantStatus(e.t, http.StatusOK)
	var codes []string
	for _, c := range r.body["recoveryCodes"].([]any) {
		codes = append(codes, c.(string))
	}
	e.clock.Add(totp.Period)
	return secret, codes
}

// loginWith posts a login with extra fields from its own address.
func (e *testEnv) loginWith(ip, email string, extra map[string]string) *response {
	e.t.Helper()
	body := map[string]string{"email": email, "password": testPassword}
	for k, v := range extra {
		body[k] = v
	}
	return e.send(request{method: "POST", path: "/v1/auth/login", ip: ip, body: body})
}

func (e *testEnv) rec(id string) userRecord {
	e.t.Helper()
	rec, ok := e.users.record(id)
	if !ok {
		e.t.Fatalf("no record %s", id)
	}
	return rec
}

func TestTOTPEnrol(t *testing.T) {
	e := newEnv(t, func(s *setup) { s.cfg.CSRF = true })
	c := e.register("ada@example.com", "Ada")

	c.do("POST", "/v1/user/totp", map[string]string{}).wantDetail(t, "currentPassword", "is required")
	c.do("POST", "/v1/user/totp", map[string]string{"currentPassword": "wrong password"}).wantDetail(t, "currentPassword", "is incorrect")
	if rec := e.rec(c.userID); rec.TOTPPending != nil || rec.TOTP != nil {
		t.Fatalf("a refused enrolment stored %+v", rec)
	}
	e.send(request{method: "POST", path: "/v1/user/totp", body: map[string]string{"currentPassword": testPassword}}).
		wantCode(t, http.StatusUnauthorized, "no_session_cookie", "no session cookie")
	e.send(request{method: "POST", path: "/v1/user/totp", cookie: c.cookie, body: map[string]string{"currentPassword": testPassword}}).
		wantCode(t, http.StatusForbidden, "invalid_csrf_token", "invalid CSRF token")

	r := c.do("POST", "/v1/user/totp", map[string]string{"currentPassword": testPassword})
	r.wantStatus(t, http.StatusOK)
	secret := totpSecret(t, r)
	b32 := totp.Encoding.EncodeToString(secret)
	wantURI := "otpauth://totp/searchsvc:ada@example.com?secret=" + b32 + "&issuer=searchsvc&algorithm=SHA1&digits=6&period=30"
	if r.body["otpauthUri"] != wantURI || r.body["operation"] != "user.totpBegin" {
		t.Fatalf("got %v, want otpauthUri %s", r.body, wantURI)
	}
	if svg, _ := r.body["qrSvg"].(string); !strings.HasPrefix(svg, "<svg") || !strings.HasSuffix(strings.TrimSpace(svg), "</svg>") {
		t.Fatalf("qrSvg is not an SVG: %.80q", svg)
	}
	rec := e.rec(c.userID)
	if rec.TOTP != nil || rec.TOTPPending == nil || bytes.Contains(rec.TOTPPending, secret) || bytes.Contains(rec.TOTPPending, []byte(b32)) {
		t.Fatalf("pending enrolment stored as %+v", rec)
	}
	if got, err := e.users.openSecret(c.userID, rec.TOTPPending); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("pending secret opens to %x, %v", got, err)
	}
	// Nothing changes until confirmed: the profile says off, and the
	// password alone still signs in.
	if p := c.do("GET", "/v1/user/profile", nil); p.field("result", "totpEnabled") != false {
		t.Fatalf("profile: %s", p.raw)
	}
	e.loginWith("198.51.100.1", "ada@example.com", nil).wantStatus(t, http.StatusOK)
}

// TestTOTPPasswordLimit: the routes that check the current password share
// the per-user limit of password checks with PUT /v1/user/password.
func TestTOTPPasswordLimit(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	for range DefaultRateLimit {
		c.do("POST", "/v1/user/totp", map[string]string{"currentPassword": "wrong password"}).wantDetail(t, "currentPassword", "is incorrect")
	}
	r := c.do("POST", "/v1/user/totp", map[string]string{"currentPassword": testPassword})
	r.wantCode(t, http.StatusTooManyRequests, "too_many_attempts", "too many password attempts")
	if r.header.Get("Retry-After") != "60" {
		t.Fatalf("Retry-After %q, want 60", r.header.Get("Retry-After"))
	}
	c.do("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "another good passphrase"}).
		wantCode(t, http.StatusTooManyRequests, "too_many_attempts", "too many password attempts")
	if rec := e.rec(c.userID); rec.TOTPPending != nil {
		t.Fatal("a limited enrolment stored a secret")
	}
}

func TestTOTPConfirm(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	c.do("POST", "/v1/user/totp/confirm", map[string]string{"code": "123456"}).
		wantCode(t, http.StatusConflict, "totp_not_started", "no second factor enrolment started")

	r := c.do("POST", "/v1/user/totp", map[string]string{"currentPassword": testPassword})
	first := totpSecret(t, r)
	// A second enrolment replaces the first: the first's code is wrong.
	r = c.do("POST", "/v1/user/totp", map[string]string{"currentPassword": testPassword})
	secret := totpSecret(t, r)
	c.do("POST", "/v1/user/totp/confirm", map[string]string{}).wantDetail(t, "code", "is required")
	c.do("POST", "/v1/user/totp/confirm", map[string]string{"code": e.codeAt(first, 0)}).wantDetail(t, "code", "is incorrect")
	c.do("POST", "/v1/user/totp/confirm", map[string]string{"code": e.codeAt(secret, 2)}).wantDetail(t, "code", "is incorrect")
	if rec := e.rec(c.userID); rec.TOTP != nil {
		t.Fatal("a wrong code turned the second factor on")
	}

	r = c.do("POST", "/v1/user/totp/confirm", map[string]string{"code": e.codeAt(secret, -1)})
	r.wantStatus(t, http.StatusOK)
	var codes []string
	for _, c := range r.body["recoveryCodes"].([]any) {
		codes = append(codes, c.(string))
	}
	slices.Sort(codes)
	if len(slices.Compact(slices.Clone(codes))) != RecoveryCodes || r.body["success"] != true {
		t.Fatalf("got %s, want %d distinct recoveryCodes", r.raw, RecoveryCodes)
	}
	rec := e.rec(c.userID)
	if rec.TOTP == nil || rec.TOTPPending != nil || rec.TOTP.LastStep != totp.Step(e.clock.Now())-1 || len(rec.TOTP.Recovery) != RecoveryCodes {
		t.Fatalf("stored %+v", rec)
	}
	for _, code := range codes {
		sum := sha256.Sum256([]byte(strings.ReplaceAll(code, "-", "")))
		if recoveryIndex(rec.TOTP.Recovery, hex.EncodeToString(sum[:])) < 0 || slices.Contains(rec.TOTP.Recovery, code) {
			t.Fatalf("recovery code %s not stored as its hash: %v", code, rec.TOTP.Recovery)
		}
	}
	if p := c.do("GET", "/v1/user/profile", nil); p.field("result", "totpEnabled") != true {
		t.Fatalf("profile: %s", p.raw)
	}
	c.do("POST", "/v1/user/totp", map[string]string{"currentPassword": testPassword}).
		wantCode(t, http.StatusConflict, "totp_enabled", "second factor already on")
	c.do("POST", "/v1/user/totp/confirm", map[string]string{"code": e.codeAt(secret, 0)}).
		wantCode(t, http.StatusConflict, "totp_enabled", "second factor already on")
}

func TestTOTPLogin(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	secret, recovery := e.enableTOTP(c)
	sessionsBefore := e.sessionCount(c.userID)

	e.loginWith("198.51.100.1", "ada@example.com", nil).
		wantCode(t, http.StatusUnauthorized, "totp_required", "second factor code required")
	e.loginWith("198.51.100.2", "ada@example.com", map[string]string{"totpCode": wrong(e.codeAt(secret, 0))}).
		wantCode(t, http.StatusUnauthorized, "invalid_totp_code", "invalid second factor code")
	// The code that confirmed, one period ago, was used: refused.
	e.loginWith("198.51.100.3", "ada@example.com", map[string]string{"totpCode": e.codeAt(secret, -1)}).
		wantCode(t, http.StatusUnauthorized, "invalid_totp_code", "invalid second factor code")
	// A right code with a wrong password: the password's answer, and the
	// code is not spent.
	r := e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.4",
		body: map[string]string{"email": "ada@example.com", "password": "wrong password", "totpCode": e.codeAt(secret, 0)}})
	r.wantCode(t, http.StatusUnauthorized, "invalid_credentials", "invalid email or password")
	if n := e.sessionCount(c.userID); n != sessionsBefore {
		t.Fatalf("refused logins made sessions: %d, want %d", n, sessionsBefore)
	}

	r = e.loginWith("198.51.100.5", "ada@example.com", map[string]string{"totpCode": e.codeAt(secret, 0)})
	r.wantStatus(t, http.StatusOK)
	if r.cookie == nil || r.field("user", "totpEnabled") != true {
		t.Fatalf("login: %s", r.raw)
	}
	if got := e.rec(c.userID).TOTP.LastStep; got != totp.Step(e.clock.Now()) {
		t.Fatalf("LastStep %d, want %d", got, totp.Step(e.clock.Now()))
	}
	// Replayed in its own window, and the window before it: refused.
	for _, steps := range []int64{0, -1} {
		e.loginWith("198.51.100.6", "ada@example.com", map[string]string{"totpCode": e.codeAt(secret, steps)}).
			wantCode(t, http.StatusUnauthorized, "invalid_totp_code", "invalid second factor code")
	}
	// The next period's code, early by a step, is accepted.
	e.loginWith("198.51.100.7", "ada@example.com", map[string]string{"totpCode": e.codeAt(secret, 1)}).wantStatus(t, http.StatusOK)

	// A recovery code works once, typed in any case and without dashes.
	typed := strings.ToUpper(strings.ReplaceAll(recovery[3], "-", ""))
	e.loginWith("198.51.100.8", "ada@example.com", map[string]string{"recoveryCode": typed}).wantStatus(t, http.StatusOK)
	if n := len(e.rec(c.userID).TOTP.Recovery); n != RecoveryCodes-1 {
		t.Fatalf("%d recovery codes left, want %d", n, RecoveryCodes-1)
	}
	e.loginWith("198.51.100.9", "ada@example.com", map[string]string{"recoveryCode": recovery[3]}).
		wantCode(t, http.StatusUnauthorized, "invalid_totp_code", "invalid second factor code")
	e.loginWith("198.51.100.10", "ada@example.com", map[string]string{"recoveryCode": "not a code"}).
		wantCode(t, http.StatusUnauthorized, "invalid_totp_code", "invalid second factor code")
}

func (e *testEnv) sessionCount(userID string) int {
	e.t.Helper()
	return len(e.sm.List(userID))
}

// TestTOTPLimits: wrong codes count per user (five per five minutes,
// whatever the address), and every attempt counts towards the login
// limit per address.
func TestTOTPLimits(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	secret, _ := e.enableTOTP(c)
	for i := range totpFreeFailures {
		e.loginWith("198.51.100."+itoa(i+1), "ada@example.com", map[string]string{"totpCode": wrong(e.codeAt(secret, 0))}).
			wantCode(t, http.StatusUnauthorized, "invalid_totp_code", "invalid second factor code")
	}
	r := e.loginWith("198.51.100.50", "ada@example.com", map[string]string{"totpCode": e.codeAt(secret, 0)})
	r.wantCode(t, http.StatusTooManyRequests, "too_many_attempts", "too many second factor attempts")
	if r.header.Get("Retry-After") != "300" {
		t.Fatalf("Retry-After %q, want 300", r.header.Get("Retry-After"))
	}
	// Disabling and confirming check codes too, under the same limit.
	c.do("DELETE", "/v1/user/totp", map[string]string{"currentPassword": testPassword, "code": e.codeAt(secret, 0)}).
		wantCode(t, http.StatusTooManyRequests, "too_many_attempts", "too many second factor attempts")
	if e.rec(c.userID).TOTP == nil {
		t.Fatal("a limited disable turned the second factor off")
	}
	e.clock.Add(totpFailureWindow)
	e.loginWith("198.51.100.51", "ada@example.com", map[string]string{"totpCode": e.codeAt(secret, 0)}).wantStatus(t, http.StatusOK)

	// From one address: the login limit counts second factor attempts.
	e.clock.Add(time.Hour)
	for range DefaultRateLimit {
		e.loginWith("203.0.113.9", "ada@example.com", nil).
			wantCode(t, http.StatusUnauthorized, "totp_required", "second factor code required")
	}
	e.loginWith("203.0.113.9", "ada@example.com", map[string]string{"totpCode": e.codeAt(secret, 0)}).
		wantCode(t, http.StatusTooManyRequests, "too_many_attempts", "too many login attempts")
}

func TestTOTPDisable(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	c.do("DELETE", "/v1/user/totp", map[string]string{"currentPassword": testPassword, "code": "123456"}).
		wantCode(t, http.StatusConflict, "totp_not_enabled", "second factor not on")
	secret, recovery := e.enableTOTP(c)

	c.do("DELETE", "/v1/user/totp", map[string]string{"code": e.codeAt(secret, 0)}).wantDetail(t, "currentPassword", "is required")
	c.do("DELETE", "/v1/user/totp", map[string]string{"currentPassword": testPassword}).wantDetail(t, "code", "is required")
	c.do("DELETE", "/v1/user/totp", map[string]string{"currentPassword": "wrong password", "code": e.codeAt(secret, 0)}).
		wantDetail(t, "currentPassword", "is incorrect")
	c.do("DELETE", "/v1/user/totp", map[string]string{"currentPassword": testPassword, "code": wrong(e.codeAt(secret, 0))}).
		wantDetail(t, "code", "is incorrect")
	c.do("DELETE", "/v1/user/totp", map[string]string{"currentPassword": testPassword, "recoveryCode": "aaaa-bbbb-cccc-dddd"}).
		wantDetail(t, "code", "is incorrect")
	if e.rec(c.userID).TOTP == nil {
		t.Fatal("a refused disable turned the second factor off")
	}
	// Changing the password leaves it on. (A minute on: the password
	// checks above used up the per-user password limit.)
	e.clock.Add(DefaultRateWindow)
	r := c.do("PUT", "/v1/user/password", map[string]string{"currentPassword": testPassword, "newPassword": "another good passphrase"})
	r.wantStatus(t, http.StatusOK)
	c.cookie = r.cookie.Value
	if e.rec(c.userID).TOTP == nil {
		t.Fatal("a password change turned the second factor off")
	}
	r = c.do("DELETE", "/v1/user/totp", map[string]string{"currentPassword": "another good passphrase", "recoveryCode": recovery[0]})
	r.wantStatus(t, http.StatusOK)
	if rec := e.rec(c.userID); rec.TOTP != nil || rec.TOTPPending != nil || r.body["operation"] != "user.totpDisable" {
		t.Fatalf("after disable: %+v, %s", rec, r.raw)
	}
	r = e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.1",
		body: map[string]string{"email": "ada@example.com", "password": "another good passphrase"}})
	if r.wantStatus(t, http.StatusOK); r.field("user", "totpEnabled") != false {
		t.Fatalf("login: %s", r.raw)
	}
}

func TestTOTPRecoveryCodesRegenerate(t *testing.T) {
	e := newEnv(t)
	c := e.register("ada@example.com", "Ada")
	c.do("POST", "/v1/user/totp/recovery-codes", map[string]string{"currentPassword": testPassword, "code": "123456"}).
		wantCode(t, http.StatusConflict, "totp_not_enabled", "second factor not on")
	secret, old := e.enableTOTP(c)
	c.do("POST", "/v1/user/totp/recovery-codes", map[string]string{"currentPassword": testPassword, "code": wrong(e.codeAt(secret, 0))}).
		wantDetail(t, "code", "is incorrect")
	r := c.do("POST", "/v1/user/totp/recovery-codes", map[string]string{"currentPassword": testPassword, "code": e.codeAt(secret, 0)})
	r.wantStatus(t, http.StatusOK)
	fresh := r.body["recoveryCodes"].([]any)
	if len(fresh) != RecoveryCodes || len(e.rec(c.userID).TOTP.Recovery) != RecoveryCodes {
		t.Fatalf("got %s", r.raw)
	}
	e.loginWith("198.51.100.1", "ada@example.com", map[string]string{"recoveryCode": old[1]}).
		wantCode(t, http.StatusUnauthorized, "invalid_totp_code", "invalid second factor code")
	e.loginWith("198.51.100.2", "ada@example.com", map[string]string{"recoveryCode": fresh[1].(string)}).wantStatus(t, http.StatusOK)
}

func TestTOTPAdminReset(t *testing.T) {
	e := newEnv(t)
	admin := e.register("root@example.com", "Root")
	ada := e.register("ada@example.com", "Ada")
	ada.do("DELETE", "/v1/admin/users/"+ada.userID+"/totp", nil).wantCode(t, http.StatusForbidden, "admin_required", "admin required")
	admin.do("DELETE", "/v1/admin/users/nobody/totp", nil).wantCode(t, http.StatusNotFound, "not_found", "user not found")
	admin.do("DELETE", "/v1/admin/users/"+ada.userID+"/totp", nil).
		wantCode(t, http.StatusConflict, "totp_not_enabled", "second factor not on")
	e.enableTOTP(ada)
	if r := admin.do("GET", "/v1/admin/users", nil); !strings.Contains(r.raw, `"totpEnabled":true`) {
		t.Fatalf("admin list does not show the second factor: %s", r.raw)
	}

	r := admin.do("DELETE", "/v1/admin/users/"+ada.userID+"/totp", nil)
	r.wantStatus(t, http.StatusOK)
	if r.body["deleted"] != 1.0 || r.body["operation"] != "user.totpReset" {
		t.Fatalf("reset: %s", r.raw)
	}
	if rec := e.rec(ada.userID); rec.TOTP != nil {
		t.Fatalf("after reset: %+v", rec)
	}
	ada.do("GET", "/v1/user/profile", nil).wantCode(t, http.StatusUnauthorized, "invalid_session", "invalid session")
	admin.do("GET", "/v1/user/profile", nil).wantStatus(t, http.StatusOK)
	e.loginWith("198.51.100.1", "ada@example.com", nil).wantStatus(t, http.StatusOK)
}

// TestTOTPRotateKeys: a second factor (and a pending enrolment) sealed
// under a previous CREDENTIALS_KEY is re-sealed by RotateKeys, and its
// codes then check under the new key alone.
func TestTOTPRotateKeys(t *testing.T) {
	dir := t.TempDir()
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	secret, pending := totp.NewSecret(), totp.NewSecret()
	u, st := openUsers(t, dir, mustVault(t, oldKey))
	for _, id := range []string{"u1", "u2"} {
		if err := st.Commit(u.InsertOp(User{ID: id, Email: id + "@example.org", Role: RoleUser, PasswordHash: "h", CreatedAt: now, UpdatedAt: now})); err != nil {
			t.Fatal(err)
		}
	}
	_, hashes := newRecoveryCodes()
	if err := st.Commit(u.beginEnrolmentOp("u1", u.sealSecret("u1", secret), now)); err != nil {
		t.Fatal(err)
	}
	rec, _ := u.record("u1")
	if err := st.Commit(u.confirmOp("u1", rec.TOTPPending, 1, hashes, now),
		u.beginEnrolmentOp("u2", u.sealSecret("u2", pending), now)); err != nil {
		t.Fatal(err)
	}
	st.Close()

	u, st = openUsers(t, dir, mustVault(t, newKey, oldKey))
	if n, err := u.RotateKeys(); n != 2 || err != nil {
		t.Fatalf("RotateKeys: got %d, %v; want 2, nil", n, err)
	}
	st.Close()
	u, st = openUsers(t, dir, mustVault(t, newKey))
	rec, _ = u.record("u1")
	op, err := u.checkCode(rec, totp.Code(secret, totp.Step(now)), "", now)
	if err == nil {
		err = st.Commit(op)
	}
	if err != nil || rec.TOTP.LastStep != 1 || len(rec.TOTP.Recovery) != RecoveryCodes {
		t.Fatalf("after rotation: %v, %+v", err, rec.TOTP)
	}
	rec2, _ := u.record("u2")
	if got, err := u.openSecret("u2", rec2.TOTPPending); err != nil || !bytes.Equal(got, pending) {
		t.Fatalf("pending secret after rotation: %x, %v", got, err)
	}
	if n, err := u.RotateKeys(); n != 0 || err != nil {
		t.Fatalf("RotateKeys again: got %d, %v", n, err)
	}
}

func TestNormalizeRecovery(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abcd-efgh-ijkm-npqr", "abcdefghijkmnpqr"},
		{" ABCD EFGH IJKM NPQR ", "abcdefghijkmnpqr"},
		{"abcd-efgh-ijkm-npq", ""},       // 15
		{"abcd-efgh-ijkm-npqrs", ""},     // 17
		{"abcd-efgh-ijkm-npq0", ""},      // 0 is not in the alphabet
		{"abcd-efgh-ijkm-npq\u00e9", ""}, // nor is é
		{"", ""},
	} {
		if got := normalizeRecovery(tc.in); got != tc.want {
			t.Errorf("normalizeRecovery(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// wrong is a six-digit code other than code.
func wrong(code string) string {
	b := []byte(code)
	b[0] = '0' + (b[0]-'0'+1)%10
	return string(b)
}

// FuzzSecondFactorBody: any body of the second factor routes and of login
// decodes or is refused, and no code or recovery code but the right ones
// opens the second factor.
func FuzzSecondFactorBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add(s)
	}
	f.Add(`{"currentPassword":"x","code":"123456","recoveryCode":"abcd-efgh-ijkm-npqr"}`)
	f.Add(`{"email":"a@b.c","password":"p","totpCode":" 123456 ","recoveryCode":"ABCD EFGH IJKM NPQR"}`)
	v := mustVault(f, bytes.Repeat([]byte{3}, 32))
	u, _ := openUsers(f, f.TempDir(), v)
	secret := bytes.Repeat([]byte{7}, totp.SecretSize)
	codes, hashes := newRecoveryCodes()
	rec := userRecord{ID: "u1", TOTP: &secondFactor{Sealed: u.sealSecret("u1", secret), Recovery: hashes}}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body string) {
		var req totpRequest
		if err := decodeBody(t, body, &req); err == nil {
			check(t, u, rec, req.Code, req.RecoveryCode, secret, codes, now)
		}
		var login loginRequest
		if err := decodeBody(t, body, &login); err == nil {
			check(t, u, rec, login.TOTPCode, login.RecoveryCode, secret, codes, now)
		}
		if n := normalizeRecovery(body); n != "" && (len(n) != 16 || normalizeRecovery(n) != n) {
			t.Fatalf("normalizeRecovery(%q) = %q", body, n)
		}
	})
}

func check(t *testing.T, u *Users, rec userRecord, code, recovery string, secret []byte, codes []string, now time.Time) {
	t.Helper()
	_, err := u.checkCode(rec, code, recovery, now)
	if err != nil {
		return
	}
	if code != "" {
		c := strings.TrimSpace(code)
		if _, ok := totp.Verify(secret, c, now, 0); !ok {
			t.Fatalf("code %q accepted", code)
		}
		return
	}
	if !slices.ContainsFunc(codes, func(c string) bool { return normalizeRecovery(c) == normalizeRecovery(recovery) }) {
		t.Fatalf("recovery code %q accepted", recovery)
	}
}
