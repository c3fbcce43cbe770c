package cuda

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"
)

// TestLibrariesListed checks that each embedded device library is listed
// once. TestGenerateAll checks the modules of every spec against the list
// (checkLibraries, allLibrariesHeld).
func TestLibrariesListed(t *testing.T) {
	embedded, err := fs.Glob(deviceFiles, "device/*.cuh")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, l := range libraries {
		listed = append(listed, l.file)
	}
	for i, f := range embedded {
		embedded[i] = path.Base(f)
	}
	slices.Sort(embedded)
	if !slices.Equal(embedded, slices.Sorted(slices.Values(listed))) {
		t.Errorf("embedded %v, listed %v: every file must be listed once", embedded, listed)
	}
}

// checkLibraries checks that a module holds each device library at most
// once, those every module holds exactly once, in the listed order, and
// records in held the libraries it holds.
func checkLibraries(t *testing.T, name, src string, held map[string]bool) {
	t.Helper()
	last := -1
	for _, l := range libraries {
		text, err := libraryText(l.file)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(src, text)
		if n > 1 || l.always && n != 1 {
			t.Errorf("%s: the module holds %s %d times", name, l.file, n)
		}
		if n == 0 {
			continue
		}
		at := strings.Index(src, text)
		if at < last {
			t.Errorf("%s: %s comes before a library listed before it", name, l.file)
		}
		last = at
		held[l.file] = true
	}
}

// allLibrariesHeld checks that every listed library is held by some module
// of the default test configurations (the flags -attn.simt and -test.dims
// may leave some out).
func allLibrariesHeld(t *testing.T, held map[string]bool) {
	t.Helper()
	if *simtFlag || *dimsFlag != "" {
		return
	}
	for _, l := range libraries {
		if !held[l.file] {
			t.Errorf("no module holds %s", l.file)
		}
	}
}

// TestLibraryText checks that a library's text starts after its opening
// comment, that a file without one is refused, and that a library not in
// the list is not written.
func TestLibraryText(t *testing.T) {
	text, err := libraryText("row_softmax.cuh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "FZ_DEV void fz_ms_add(") {
		t.Errorf("row_softmax.cuh starts %q", text[:min(len(text), 40)])
	}
	for _, src := range []string{"FZ_DEV void f() {}\n/* x */\n", "/* open\nFZ_DEV void f() {}\n"} {
		if text, err := cutComment("x.cuh", src); err == nil {
			t.Errorf("%q without an opening comment gave %q", src, text)
		}
	}
	if _, err := libraryText("absent.cuh"); err == nil {
		t.Error("a missing library was read")
	}
	var src strings.Builder
	if err := writeLibraries(&src, []string{"absent.cuh"}, map[string]bool{}); err == nil {
		t.Error("a library not in the list was written")
	}
}
