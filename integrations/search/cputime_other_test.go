//go:build !linux

package search

import "time"

// threadCPU is not measured outside Linux.
func threadCPU() time.Duration { return 0 }

// processCPU is not measured outside Linux.
func processCPU() time.Duration { return 0 }
