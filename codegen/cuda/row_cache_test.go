package cuda

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRowCache generates the residual add + RMSNorm of bench/specs at
// widths around the cache's bounds and checks where its row lives: at a
// constant width of up to rowCacheSteps block-wide steps, x and r are each
// loaded once a step (16 bytes, kept packed, while the register budget
// lasts) and read from registers by the pass after the statistics, under
// one vector bound taken over every access of both passes, a scalar loop
// after it, with launch bounds of rowCacheBlocks; wider rows and rows
// whose length is a dim load their chunks in every pass.
func TestRowCache(t *testing.T) {
	spec := func(d string) string {
		return fmt.Sprintf("layer r\ndim N, D\ninput x : bf16[N, %[1]s]\ninput r : bf16[N, %[1]s]\nparam w : bf16[%[1]s]\n"+
			"output h : bf16[N, %[1]s]\noutput y : bf16[N, %[1]s]\nh = x + r\ny = h * rsqrt(mean(h * h, axis=-1) + 1e-6) * w\n", d)
	}
	all := []string{"p0", "p1", "p2"}
	for _, tc := range []struct {
		d      string
		dims   map[string]int64
		steps  int // 0: no cache
		bound  int64
		cached []string // loaded into the cache once; the others by fz_ld8 in each pass that reads them
		local  int      // fz_ld8 chunk loads in the two passes
	}{
		{"4096", map[string]int64{"N": 3}, 2, 4096, all, 0},
		{"4100", map[string]int64{"N": 3}, 2, 4096, all, 0},
		{"200", map[string]int64{"N": 3}, 1, 200, all, 0},
		// 8 steps: x takes 32 of the 48 registers, r and w stream.
		{"16384", map[string]int64{"N": 3}, 8, 16384, []string{"p0"}, 3},
		{"16392", map[string]int64{"N": 3}, 0, 0, nil, 5},
		{"D", map[string]int64{"N": 3, "D": 4096}, 0, 0, nil, 5},
	} {
		st, pk := planGemm(t, spec(tc.d), tc.dims)
		k, err := newKgen(st.Plan, pk, pk.Launch.Block)
		if err != nil {
			t.Fatal(err)
		}
		body, err := k.elementwiseKernel()
		if err != nil {
			t.Fatalf("D=%s: %v", tc.d, err)
		}
		if n := strings.Count(body, "fz_ld8_bf16(vl"); n != tc.local {
			t.Errorf("D=%s: %d chunk loads by fz_ld8, want %d\n%s", tc.d, n, tc.local, body)
		}
		if tc.steps == 0 {
			if strings.Contains(body, "nvr") || k.minBlocks != 0 {
				t.Errorf("D=%s: a row cache (min blocks %d):\n%s", tc.d, k.minBlocks, body)
			}
			continue
		}
		line := regexp.MustCompile(`const i64 nvr1 = \((.*)\) \? (\d+) : 0;`).FindStringSubmatch(body)
		if line == nil || line[2] != fmt.Sprint(tc.bound) {
			t.Fatalf("D=%s: vector bound %q, want one of %d\n%s", tc.d, line, tc.bound, body)
		}
		for _, p := range []string{"p0", "p1", "p3", "p4"} {
			if want := fmt.Sprintf("fz_aligned(%s + ((ri0*%s)), 16)", p, tc.d); !strings.Contains(line[1], want) {
				t.Errorf("D=%s: the bound %q lacks %s", tc.d, line[1], want)
			}
		}
		for _, want := range []string{
			fmt.Sprintf("for (int it = 0; it < %d; it++) {", tc.steps),
			"if (j0 < nvr1) {",
			fmt.Sprintf("jj = nvr1 + threadIdx.x; jj < %s;", tc.d),
		} {
			if !strings.Contains(body, want) {
				t.Errorf("D=%s: no %q in\n%s", tc.d, want, body)
			}
		}
		for _, p := range all {
			want := 0
			if slices.Contains(tc.cached, p) {
				want = 1
			}
			if n := strings.Count(body, "*(const uint4*)("+p+" "); n != want {
				t.Errorf("D=%s: %s loaded into the cache %d times, want %d", tc.d, p, n, want)
			}
		}
		if k.minBlocks != rowCacheBlocks {
			t.Errorf("D=%s: min blocks %d, want %d", tc.d, k.minBlocks, rowCacheBlocks)
		}
	}
}
