//go:build unix

package folder

import (
	"io/fs"
	"syscall"
)

// fileID returns a file's device and inode, which a rename within one
// file system keeps.
func fileID(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino) // their types differ between systems
	}
	return 0, 0
}
