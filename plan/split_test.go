package plan

import (
	"math"
	"testing"
)

// tilesCovering is the smallest multiple of 16 keys, at least lo, that
// parts splits of it cover n keys: found by search, not by the rounding
// arithmetic of the twins.
func tilesCovering(n, parts, lo int64) int64 {
	size := int64(DecodeTileKeys)
	for size < lo || size*parts < n {
		size += DecodeTileKeys
	}
	return size
}

// splitsOf counts the splits of size keys that cover n keys, one by one.
func splitsOf(n, size int64) int64 {
	var c int64
	for covered := int64(0); covered < n; covered += size {
		c++
	}
	return c
}

// TestPrefixSplit checks PrefixSplit (fz_att_psplit's twin) against a
// restatement by search over a grid of prefix lengths, slot counts, fixed
// sizes and split counts, and that its splits cover the prefix exactly
// and leave a slot for the own keys.
func TestPrefixSplit(t *testing.T) {
	for _, npre := range []int64{0, 1, 15, 16, 17, 255, 256, 257, 1000, 4096, 32767, 100000} {
		for _, slots := range []int64{0, 1, 2, 3, 8, 33, 264, math.MaxInt64} {
			for _, chunk := range []int64{0, 16, 64, 1024} {
				for _, nps := range []int64{1, 2, 7, 64} {
					n, size := PrefixSplit(npre, slots, chunk, nps)
					var wn, wsize int64
					if npre > 0 && slots >= 2 {
						wsize = chunk
						if chunk <= 0 {
							wsize = tilesCovering(npre, nps, PrefixMinKeys)
						}
						wn = splitsOf(npre, wsize)
						if wn > slots-1 {
							wsize = tilesCovering(npre, slots-1, 0)
							wn = splitsOf(npre, wsize)
						}
					}
					if n != wn || size != wsize {
						t.Fatalf("PrefixSplit(%d, %d, %d, %d) = %d splits of %d, want %d of %d", npre, slots, chunk, nps, n, size, wn, wsize)
					}
					if n > 0 && (n > slots-1 || n*size < npre || (n-1)*size >= npre) {
						t.Fatalf("PrefixSplit(%d, %d, %d, %d): %d splits of %d do not cover the prefix in the slots", npre, slots, chunk, nps, n, size)
					}
				}
			}
		}
	}
}

// TestDecodeSplit checks DecodeSplit (fz_att_decode's split of the visible
// keys) against a restatement by search, and that its splits cover the
// keys and fit the slots whenever more than one split is taken.
func TestDecodeSplit(t *testing.T) {
	for _, vis := range []int64{0, 1, 15, 16, 17, 300, 4096, 4097, 32767, 131072} {
		for _, nsplit := range []int64{1, 2, 3, 16, 132, 264} {
			for _, chunk := range []int64{0, 16, 256, 4096} {
				for _, slots := range []int64{1, 2, 5, 132, math.MaxInt64} {
					n, size := DecodeSplit(vis, nsplit, chunk, slots)
					wsize := chunk
					if chunk <= 0 {
						wsize = tilesCovering(vis, nsplit, 0)
					}
					wn := max(splitsOf(vis, wsize), 1)
					if wn > 1 && wn > slots {
						wsize = max(vis, DecodeTileKeys)
						if slots > 1 {
							wsize = tilesCovering(vis, slots, 0)
						}
						wn = splitsOf(vis, wsize)
					}
					if n != wn || size != wsize {
						t.Fatalf("DecodeSplit(%d, %d, %d, %d) = %d splits of %d, want %d of %d", vis, nsplit, chunk, slots, n, size, wn, wsize)
					}
					if n*size < vis || (n > 1 && n > slots) {
						t.Fatalf("DecodeSplit(%d, %d, %d, %d): %d splits of %d", vis, nsplit, chunk, slots, n, size)
					}
				}
			}
		}
	}
}
