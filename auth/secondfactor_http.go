package auth

import (
	"errors"
	"fmt"
	"net/http"

	"searchsvc/auth/qr"
	"searchsvc/auth/totp"
	"searchsvc/httpx"
)

// totpIssuer names the service in an authenticator app, before the
// user's email.
const totpIssuer = "searchsvc"

// totpRequest is the body of the second factor routes: each reads the
// fields it needs.
type totpRequest struct {
	CurrentPassword string `json:"currentPassword"`
	Code            string `json:"code"`
	RecoveryCode    string `json:"recoveryCode"`
}

// BeginTOTP serves POST /v1/user/totp, behind Require: with the current
// password, it starts an enrolment and answers the new secret (base32),
// its otpauthUri and qrSvg, an SVG QR code of that address. Nothing
// changes for login until POST /v1/user/totp/confirm; a second call
// replaces the pending secret. 409 if the second factor is already on.
func (h *Handlers) BeginTOTP() http.Handler {
	return endpoint("user.totpBegin", h.beginTOTP)
}

func (h *Handlers) beginTOTP(w http.ResponseWriter, r *http.Request) error {
	u, _, err := h.totpCaller(w, r, true, false)
	if err != nil {
		return err
	}
	if u.TOTPEnabled {
		return ErrTOTPEnabled
	}
	secret := totp.NewSecret()
	defer clear(secret)
	uri := totp.URI(totpIssuer, u.Email, secret)
	code, err := qr.Encode(uri)
	if err != nil {
		return fmt.Errorf("QR code of the otpauth address: %w", err)
	}
	if err := h.store.Commit(h.users.beginEnrolmentOp(u.ID, h.users.sealSecret(u.ID, secret), h.now())); err != nil {
		return fmt.Errorf("store pending second factor: %w", err)
	}
	h.log.Info("second factor enrolment started", "user_id", u.ID)
	httpx.Write(w, r, http.StatusOK, "user.totpBegin",
		httpx.F("secret", totp.Encoding.EncodeToString(secret)),
		httpx.F("otpauthUri", uri),
		httpx.F("qrSvg", string(code.SVG())))
	return nil
}

// ConfirmTOTP serves POST /v1/user/totp/confirm, behind Require: a valid
// code of the pending secret turns the second factor on, and the answer
// holds the RecoveryCodes recovery codes, shown this once. 409 without a
// pending enrolment; a wrong code is 400 with a detail on code.
func (h *Handlers) ConfirmTOTP() http.Handler {
	return endpoint("user.totpConfirm", h.confirmTOTP)
}

func (h *Handlers) confirmTOTP(w http.ResponseWriter, r *http.Request) error {
	u, req, err := h.totpCaller(w, r, false, false)
	if err != nil {
		return err
	}
	if req.Code == "" {
		return &ValidationError{Fields: []httpx.FieldError{{Field: "code", Message: "is required"}}}
	}
	rec, ok := h.users.record(u.ID)
	if !ok {
		return errSessionUserGone
	}
	if rec.TOTP != nil {
		return ErrTOTPEnabled
	}
	if rec.TOTPPending == nil {
		return ErrTOTPNotEnrolled
	}
	if err := h.totpAllowed(u.ID); err != nil {
		return err
	}
	secret, err := h.users.openSecret(u.ID, rec.TOTPPending)
	if err != nil {
		return fmt.Errorf("open pending second factor secret: %w", err)
	}
	step, ok := totp.Verify(secret, req.Code, h.now(), 0)
	clear(secret)
	if !ok {
		h.totpFailed(u.ID, "second factor confirm with a wrong code")
		return wrongCode()
	}
	codes, hashes := newRecoveryCodes()
	if err := h.store.Commit(h.users.confirmOp(u.ID, rec.TOTPPending, step, hashes, h.now())); err != nil {
		return fmt.Errorf("turn second factor on: %w", err)
	}
	h.totpFailures.reset(u.ID)
	h.log.Info("second factor on", "user_id", u.ID)
	success(w, r, "user.totpConfirm", httpx.F("recoveryCodes", codes))
	return nil
}

// DisableTOTP serves DELETE /v1/user/totp, behind Require: with the
// current password and a code (or a recovery code) it turns the second
// factor off. 409 if it is not on.
func (h *Handlers) DisableTOTP() http.Handler {
	return endpoint("user.totpDisable", h.disableTOTP)
}

func (h *Handlers) disableTOTP(w http.ResponseWriter, r *http.Request) error {
	u, err := h.totpProof(w, r)
	if err != nil {
		return err
	}
	if err := h.store.Commit(h.users.disableOp(u.ID, h.now())); err != nil {
		return fmt.Errorf("turn second factor off: %w", err)
	}
	h.log.Info("second factor off", "user_id", u.ID)
	success(w, r, "user.totpDisable")
	return nil
}

// RegenerateRecoveryCodes serves POST /v1/user/totp/recovery-codes,
// behind Require: with the current password and a code (or a recovery
// code) it replaces every recovery code by RecoveryCodes new ones, shown
// this once.
func (h *Handlers) RegenerateRecoveryCodes() http.Handler {
	return endpoint("user.totpRecoveryCodes", h.regenerateRecoveryCodes)
}

func (h *Handlers) regenerateRecoveryCodes(w http.ResponseWriter, r *http.Request) error {
	u, err := h.totpProof(w, r)
	if err != nil {
		return err
	}
	codes, hashes := newRecoveryCodes()
	if err := h.store.Commit(h.users.setRecoveryOp(u.ID, hashes, h.now())); err != nil {
		return fmt.Errorf("store recovery codes: %w", err)
	}
	h.log.Info("recovery codes regenerated", "user_id", u.ID)
	success(w, r, "user.totpRecoveryCodes", httpx.F("recoveryCodes", codes))
	return nil
}

// ResetTOTP serves DELETE /v1/admin/users/{userId}/totp, behind
// RequireAdmin: the user's second factor is turned off and every session
// of theirs deleted, for a user who lost both the app and the recovery
// codes. 404 for an unknown user, 409 if the second factor is not on.
func (h *Handlers) ResetTOTP() http.Handler {
	return endpoint("user.totpReset", h.resetTOTP)
}

func (h *Handlers) resetTOTP(w http.ResponseWriter, r *http.Request) error {
	p, err := principalOf(r)
	if err != nil {
		return err
	}
	target, ok := h.users.Get(r.PathValue("userId"))
	if !ok {
		return ErrUserNotFound
	}
	if !target.TOTPEnabled {
		return ErrTOTPNotEnabled
	}
	if err := h.store.Commit(h.users.disableOp(target.ID, h.now())); err != nil {
		if errors.Is(err, ErrTOTPNotEnabled) || errors.Is(err, ErrUserNotFound) {
			return err
		}
		return fmt.Errorf("reset second factor: %w", err)
	}
	h.totpFailures.reset(target.ID)
	n, err := h.sessions.DeleteUser(target.ID, "")
	if err != nil {
		return fmt.Errorf("delete sessions after second factor reset: %w", err)
	}
	h.log.Info("second factor reset by an administrator", "user_id", target.ID, "admin_id", p.user.ID, "sessions_deleted", n)
	if target.ID == p.user.ID {
		h.sessions.ClearCookie(w)
	}
	success(w, r, "user.totpReset", httpx.F("deleted", n))
	return nil
}

// totpCaller decodes a second factor request of the caller and checks
// what the route needs: the current password (limited per user as a
// password change is), a code or a recovery code.
func (h *Handlers) totpCaller(w http.ResponseWriter, r *http.Request, password, code bool) (User, totpRequest, error) {
	var req totpRequest
	p, err := principalOf(r)
	if err != nil {
		return User{}, req, err
	}
	if err := httpx.Decode(w, r, &req); err != nil {
		return User{}, req, err
	}
	u, found := h.users.Get(p.user.ID) // with its hash, which the principal lacks
	if !found {
		return User{}, req, errSessionUserGone
	}
	var v validator
	if password && req.CurrentPassword == "" {
		v.add("currentPassword", "is required")
	}
	if code && req.Code == "" && req.RecoveryCode == "" {
		v.add("code", "is required")
	}
	if err := v.err(); err != nil {
		return User{}, req, err
	}
	if password {
		if ok, wait := h.pwChanges.allow(h.now(), u.ID); !ok {
			return User{}, req, &RateLimitError{Message: "too many password attempts", RetryAfter: wait}
		}
		ok, err := h.checkPassword(r.Context(), u, req.CurrentPassword)
		if err != nil {
			return User{}, req, err
		}
		if !ok {
			h.log.Info("second factor change with a wrong current password", "user_id", u.ID)
			return User{}, req, wrongCurrentPassword()
		}
	}
	return u, req, nil
}

// totpProof checks the proof that turning the second factor off or
// replacing the recovery codes needs: the current password and a code or
// a recovery code, which is then used up.
func (h *Handlers) totpProof(w http.ResponseWriter, r *http.Request) (User, error) {
	u, req, err := h.totpCaller(w, r, true, true)
	if err != nil {
		return User{}, err
	}
	if !u.TOTPEnabled {
		return User{}, ErrTOTPNotEnabled
	}
	if err := h.secondStep(u.ID, req.Code, req.RecoveryCode); err != nil {
		if errors.Is(err, ErrTOTPInvalid) {
			return User{}, wrongCode()
		}
		return User{}, err
	}
	return u, nil
}

// secondStep checks a code or a recovery code for the user whose second
// factor is on, and records its use so that it is not accepted again.
// Wrong codes count towards the per-user limit.
func (h *Handlers) secondStep(userID, code, recovery string) error {
	if code == "" && recovery == "" {
		return ErrTOTPRequired
	}
	if err := h.totpAllowed(userID); err != nil {
		return err
	}
	rec, ok := h.users.record(userID)
	if !ok {
		return ErrInvalidCredentials
	}
	op, err := h.users.checkCode(rec, code, recovery, h.now())
	if err == nil {
		err = h.store.Commit(op)
	}
	if errors.Is(err, ErrTOTPInvalid) {
		return h.totpFailed(userID, "wrong or reused second factor code")
	}
	if err != nil {
		return fmt.Errorf("check second factor: %w", err)
	}
	h.totpFailures.reset(userID)
	return nil
}

// totpAllowed refuses a code when the user is over the per-user limit.
func (h *Handlers) totpAllowed(userID string) error {
	if wait := h.totpFailures.wait(userID, h.now()); wait > 0 {
		h.log.Info("second factor attempts limited", "user_id", userID)
		return &RateLimitError{Message: "too many second factor attempts", RetryAfter: wait}
	}
	return nil
}

// totpFailed counts a wrong code against the user and returns
// ErrTOTPInvalid.
func (h *Handlers) totpFailed(userID, event string) error {
	h.totpFailures.note(userID, h.now())
	h.log.Info(event, "user_id", userID)
	return ErrTOTPInvalid
}

// wrongCode is the answer to a wrong code from a signed-in caller: 400 on
// the field, as for a wrong current password, since the session is fine.
func wrongCode() error {
	return &ValidationError{Fields: []httpx.FieldError{{Field: "code", Message: "is incorrect"}}}
}
