package cuda

import (
	"strconv"
	"strings"
	"testing"
)

// ptxasSlack is how far a kernel's register count in the ptxas table may
// move with the source unchanged: the same module gave gemma2_softcap's
// unfused k13_gemm_matmul 143 registers, and 139 in two runs of make test
// on a loaded two-core machine (2026-12-06), though 40 generations of it
// hashed the same and six concurrent compiles of it all gave 143.
const ptxasSlack = 4

// ptxasEqual reports whether two ptxas tables (TestNVRTC's rows) agree:
// the same lines, but for register counts within ptxasSlack.
func ptxasEqual(want, got string) bool {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	if len(w) != len(g) {
		return false
	}
	for i := range w {
		if w[i] == g[i] {
			continue
		}
		wf, gf := strings.Fields(w[i]), strings.Fields(g[i])
		if len(wf) != len(gf) || len(wf) < 6 || strings.HasPrefix(w[i], "#") {
			return false
		}
		wr, err1 := strconv.Atoi(wf[3])
		gr, err2 := strconv.Atoi(gf[3])
		if err1 != nil || err2 != nil || max(wr-gr, gr-wr) > ptxasSlack {
			return false
		}
		wf[3], gf[3] = "", ""
		if strings.Join(wf, " ") != strings.Join(gf, " ") {
			return false
		}
	}
	return true
}

// TestPtxasEqual: register counts within the slack agree, anything else
// that differs does not.
func TestPtxasEqual(t *testing.T) {
	const row = "gemma2_softcap/unfused/B=2,S=3,T=17                  sm_90a k13_gemm_matmul                           %s  38912    0"
	base := "# header\n" + strings.Replace(row, "%s", "143", 1) + "\n"
	for _, tc := range []struct {
		got  string
		want bool
	}{
		{base, true},
		{strings.Replace(base, " 143 ", " 139 ", 1), true},
		{strings.Replace(base, " 143 ", " 147 ", 1), true},
		{strings.Replace(base, " 143 ", " 138 ", 1), false},
		{strings.Replace(base, "38912", "38913", 1), false},
		{strings.Replace(base, "k13_gemm_matmul", "k14_gemm_matmul", 1), false},
		{strings.Replace(base, "    0\n", "    0 serialized\n", 1), false},
		{strings.Replace(base, "# header", "# other", 1), false},
		{base + "x\n", false},
	} {
		if got := ptxasEqual(base, tc.got); got != tc.want {
			t.Errorf("%q: equal %v, want %v", tc.got, got, tc.want)
		}
	}
}
