// Package auth owns users and their authentication: the users table of the
// main store, Argon2id password hashes, registration and login (with the
// per-address login rate limit), the session middleware that every
// session-protected route sits behind (with the optional CSRF check), the
// user's own session endpoints, the password change, the second factor
// (TOTP enrolment, recovery codes and the login's second step, in
// secondfactor.go; codes in auth/totp, the QR code in auth/qr) and the
// administrator endpoints.
//
// Sessions themselves (records, cookie, expiry) belong to package sessions;
// auth decides who may get one and what a request carrying one may do.
// Errors are typed here and turned into httpx errors in one place,
// httpError in errors.go.
package auth
