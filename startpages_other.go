//go:build !linux

package main

// releaseStartPages does nothing outside Linux; see startpages_linux.go.
func releaseStartPages() {}
