//go:build !linux

package auth

// maxRSS is not measured outside Linux.
func maxRSS() int64 { return -1 }
