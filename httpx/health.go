package httpx

import "net/http"

// Health answers GET /healthz: the process is alive and serving.
func Health() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		One(w, r, "health.read", map[string]string{"status": "ok"})
	})
}
