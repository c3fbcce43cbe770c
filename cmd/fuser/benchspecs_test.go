package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestBenchSpecs plans every spec under bench/specs at the dims of the
// `fuser bench` command its header gives (the page-pool dims derived as
// the bench derives them), so that the commands the results READMEs quote
// keep working: a spec without such a line fails.
func TestBenchSpecs(t *testing.T) {
	files, err := filepath.Glob("../../bench/specs/*.fu")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bench specs: %v", err)
	}
	cmd := regexp.MustCompile(`(?m)^# fuser bench bench/specs/(\S+) (.*)$`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := cmd.FindAllStringSubmatch(string(src), -1)
		if len(m) == 0 {
			t.Errorf("%s: no `# fuser bench bench/specs/... -dims ...` line in its header", f)
			continue
		}
		for _, c := range m {
			if c[1] != filepath.Base(f) {
				t.Errorf("%s: its header benches %s", f, c[1])
				continue
			}
			g, err := loadSpec(f)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			flags := strings.Fields(c[2])
			for i := 0; i+1 < len(flags); i += 2 {
				if flags[i] != "-dims" {
					t.Errorf("%s: its header's bench command passes %s", f, flags[i])
					continue
				}
				_, full, err := benchDims(flags[i+1], g)
				if err != nil {
					t.Errorf("%s: -dims %s: %v", f, flags[i+1], err)
					continue
				}
				bind := make([]string, 0, len(full))
				for _, d := range slices.Sorted(maps.Keys(full)) {
					bind = append(bind, fmt.Sprintf("%s=%d", d, full[d]))
				}
				args := []string{"plan", f, "-dims", strings.Join(bind, ",")}
				if out, code := runCmd(t, args...); code != 0 || !strings.Contains(out, "k00_") {
					t.Errorf("fuser %s: exit %d\n%s", strings.Join(args, " "), code, out)
				}
			}
		}
	}
}
