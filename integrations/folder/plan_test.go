package folder

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestPlanBounded: a first scan's plan holds no item itself, whatever the
// files (read or stored by name only): every file goes to a task of at
// most batchFiles files, so a sync holds one batch's items at a time.
func TestPlanBounded(t *testing.T) {
	var files []entry
	for i := range 200 {
		name := fmt.Sprintf("f%03d.raw", i) // not read: by name only
		if i%2 == 0 {
			name = fmt.Sprintf("f%03d.txt", i)
		}
		files = append(files, entry{path: name, key: fileKey{dev: 1, ino: uint64(i + 1), size: 10, mtime: 5}})
	}
	res := plan(files, nil, Config{}.withDefaults())
	if len(res.Output) != 0 || len(res.Tasks) != 4 {
		t.Fatalf("plan: %d items, %d tasks; want 0 items, 4 tasks", len(res.Output), len(res.Tasks))
	}
	n, nameOnly := 0, 0
	for _, task := range res.Tasks {
		var fs []batchFile
		if err := json.Unmarshal([]byte(task.Payload[payloadFiles]), &fs); err != nil || len(fs) > batchFiles || task.Items != len(fs) {
			t.Fatalf("task %v: %d files (%v)", task.Type, len(fs), err)
		}
		for _, f := range fs {
			n++
			if f.NameOnly {
				nameOnly++
			}
		}
	}
	if n != 200 || nameOnly != 100 {
		t.Errorf("tasks hold %d files, %d by name only; want 200, 100", n, nameOnly)
	}
}
