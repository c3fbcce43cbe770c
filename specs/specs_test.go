package specs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead reads an embedded spec by name, a spec file by path, and fails
// on a name that is neither, saying so.
func TestRead(t *testing.T) {
	name, src, err := Read(Default)
	if err != nil || name != "specs/"+Default+".fu" || !strings.Contains(src, "layer "+Default) {
		t.Fatalf("Read(%q) = %q, %d bytes, %v", Default, name, len(src), err)
	}
	path := filepath.Join(t.TempDir(), "mine.fu")
	if err := os.WriteFile(path, []byte("layer mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if name, src, err := Read(path); err != nil || name != path || src != "layer mine\n" {
		t.Fatalf("Read(%q) = %q, %q, %v", path, name, src, err)
	}
	if _, _, err := Read("nosuchspec"); err == nil || !strings.Contains(err.Error(), "no embedded spec nosuchspec") {
		t.Fatalf("Read(nosuchspec) = %v, want an error naming it", err)
	}
}
