package plan

import "testing"

// TestGemvSplits checks, over a grid of K and wanted split counts, that the
// launch's splits cover K in GemvSplitRows' rows, none of them empty, the
// rows whole 8-row groups, and never more splits than wanted.
func TestGemvSplits(t *testing.T) {
	for k := int64(1); k <= 20000; k += 1 + k/7 {
		for want := int64(1); want <= 140; want++ {
			n := GemvSplits(k, want)
			rows := GemvSplitRows(k, n)
			switch {
			case n < 1 || n > want:
				t.Fatalf("K %d, want %d: %d splits", k, want, n)
			case rows%8 != 0:
				t.Fatalf("K %d, %d splits: %d rows a split, not whole 8-row groups", k, n, rows)
			case n*rows < k:
				t.Fatalf("K %d, %d splits of %d rows leave rows out", k, n, rows)
			case (n-1)*rows >= k:
				t.Fatalf("K %d, %d splits of %d rows: the last is empty", k, n, rows)
			}
		}
	}
	// The Llama-3-8B decode step's projections keep their counts.
	for _, c := range []struct{ k, want, n int64 }{{4096, 5, 5}, {4096, 8, 8}, {14336, 8, 8}, {4104, 64, 57}} {
		if n := GemvSplits(c.k, c.want); n != c.n {
			t.Errorf("K %d, want %d: %d splits, want %d", c.k, c.want, n, c.n)
		}
	}
}
