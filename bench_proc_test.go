package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procCPU returns the CPU time process pid used so far (user and system,
// from /proc/PID/stat, in clock ticks of 1/100 s).
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	user, sys := procCPUSplit(b, pid)
	return user + sys
}

// procCPUSplit returns the user and system CPU time of process pid.
func procCPUSplit(b *testing.B, pid int) (user, sys time.Duration) {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %v %v", pid, err1, err2)
	}
	return time.Duration(utime) * 10 * time.Millisecond, time.Duration(stime) * 10 * time.Millisecond
}

// taskCPU returns the CPU time every thread of process pid has run so
// far, in nanoseconds (the first field of /proc/PID/task/*/schedstat),
// finer than /proc/PID/stat's ticks of 10 ms, which a query is shorter
// than.
func taskCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	var sum time.Duration
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // a thread that ended meanwhile
		}
		ns, err := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/task/%s/schedstat: %v", pid, t.Name(), err)
		}
		sum += time.Duration(ns)
	}
	return sum
}
