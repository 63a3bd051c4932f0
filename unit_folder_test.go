package main

import (
	"slices"
	"strings"
	"testing"
)

// TestSystemdUnitFolders: the unit keeps the places where FOLDER_ROOTS
// usually lie read-only to the service (ReadOnlyPaths=, each allowed to
// be missing), and makes none of them writable.
func TestSystemdUnitFolders(t *testing.T) {
	var ro []string
	for _, s := range readUnit(t, unitFile) {
		switch s.key {
		case "ReadOnlyPaths":
			ro = append(ro, strings.Fields(s.value)...)
		case "ReadWritePaths":
			t.Errorf("ReadWritePaths=%s: the service writes only its state directory", s.value)
		}
	}
	for _, want := range []string{"-/srv", "-/mnt", "-/media"} {
		if !slices.Contains(ro, want) {
			t.Errorf("ReadOnlyPaths= has no %s (got %q)", want, ro)
		}
	}
}
