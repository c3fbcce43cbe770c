package golang

import "testing"

func TestExported(t *testing.T) {
	for in, want := range map[string]string{"x": "X", "kv_indptr": "KvIndptr", "wqkv": "Wqkv", "B": "B", "_a__b_": "AB", "_1x": "V1x", "ß": "Vß"} {
		if got := exported(in); got != want {
			t.Errorf("exported(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNamer(t *testing.T) {
	n := newNamer("Arena")
	for _, tc := range []struct {
		spec string
		id   int
		want string
	}{{"k", 1, "K"}, {"K", 2, "K2"}, {"arena", 3, "Arena3"}, {"k2", 4, "K24"}, {"K2", 5, "K25"}} {
		if got := n.name(tc.spec, tc.id); got != tc.want {
			t.Errorf("name(%q, %d) = %q, want %q", tc.spec, tc.id, got, tc.want)
		}
	}
}

func TestCheckPackage(t *testing.T) {
	for pkg, want := range map[string]bool{"tiny": true, "llama3_8b": true, "main": false, "func": false, "3x": false, "_": false, "": false} {
		if checkPackage(pkg) != want {
			t.Errorf("checkPackage(%q) = %v", pkg, !want)
		}
	}
}
