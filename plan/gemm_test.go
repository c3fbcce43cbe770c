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

// TestGemmWGSplits checks the wgmma GEMM's split choice: never more
// clusters than tiles or than the target runs at once, a split count the
// target has slots for and whose shares of K are at least GemmWGSplitMinK,
// unsplit wherever the tiles fill whole rounds of the SMs (and on the
// A100, which has no cluster slots described), a split last round only
// after whole rounds and with no more tiles left than clusters; and the
// choices of the Llama-3-8B prefill's GEMMs on the H200.
func TestGemmWGSplits(t *testing.T) {
	for _, tg := range []Target{H200, A100} {
		for tiles := int64(1); tiles <= 1000; tiles += 1 + tiles/9 {
			for k := int64(16); k <= 20000; k += 1 + k/3 {
				s, c, tail := GemmWGSplits(tg, tiles, k)
				switch {
				case c < 1 || c > tg.ResidentClusters(s) || !tail && c > tiles:
					t.Fatalf("%s, %d tiles, K %d: %d clusters of %d", tg.Name, tiles, k, c, s)
				case s > 1 && k < s*GemmWGSplitMinK:
					t.Fatalf("%s, %d tiles, K %d: %d splits", tg.Name, tiles, k, s)
				case s > 1 && tiles%tg.SMs == 0:
					t.Fatalf("%s, %d tiles, K %d: %d splits, though the tiles fill the SMs", tg.Name, tiles, k, s)
				case tail && (s != GemmWGCluster || tiles <= s*c || tiles%(s*c) > c):
					t.Fatalf("%s, %d tiles, K %d: the last round split over %d clusters of %d", tg.Name, tiles, k, c, s)
				case tail && GemmWGFull(tiles, s*c, s, true, true) != tiles/(s*c)*(s*c):
					t.Fatalf("%s, %d tiles, K %d: the kernel would not split the last round the plan splits", tg.Name, tiles, k)
				}
			}
		}
	}
	for _, c := range []struct {
		tiles, k, splits, clusters int64
		tail                       bool
	}{
		{96, 4096, 1, 96, false},     // QKV at 512 tokens
		{64, 4096, 2, 64, false},     // O
		{448, 4096, 2, 66, true},     // gate/up: three rounds, then 52 split
		{64, 14336, 2, 64, false},    // down
		{133, 2600, 2, 66, true},     // one round, then one tile split
		{200, 600, 1, 132, false},    // 68 left for 66 clusters: two rounds unsplit
		{768, 4096, 1, 132, false},   // QKV at 4096 tokens: 108 left for 66 clusters
		{16, 256, 1, 16, false},      // a K too short to split
		{16, 512, 2, 16, false},      // two splits of 256
		{3584, 4096, 2, 66, true},    // gate/up at 4096 tokens: 20 left
		{512, 14336, 1, 132, false},  // down at 4096 tokens
		{132, 100000, 1, 132, false}, // one full round
	} {
		if s, n, tail := GemmWGSplits(H200, c.tiles, c.k); s != c.splits || n != c.clusters || tail != c.tail {
			t.Errorf("%d tiles, K %d: %d splits, %d clusters, tail %v; want %d, %d, %v", c.tiles, c.k, s, n, tail, c.splits, c.clusters, c.tail)
		}
	}
	for _, c := range []struct {
		t        Target
		tiles, k int64
		cost     int64
		ok       bool
	}{
		{H200, 448, 4096, 3*4352 + 2048*115/100 + 256 + 128, true},
		{H200, 768, 4096, 0, false}, // 108 tiles left, 66 clusters
		{H200, 100, 4096, 0, false}, // no whole round
		{H200, 264, 4096, 0, false}, // no tiles left
		{H200, 140, 500, 0, false},  // K too short to split
		{A100, 448, 4096, 0, false}, // no cluster slots
	} {
		if cost, ok := GemmWGTailCost(c.t, c.tiles, c.k); cost != c.cost || ok != c.ok {
			t.Errorf("%s, %d tiles, K %d: tail cost %d, ok %v; want %d, %v", c.t.Name, c.tiles, c.k, cost, ok, c.cost, c.ok)
		}
	}
	for _, c := range []struct {
		t            Target
		tiles, k, s  int64
		rounds, item int64
		ok           bool
	}{
		{H200, 64, 4096, 1, 1, 4352, true},
		{H200, 64, 4096, 2, 1, 2048*115/100 + 256 + 128, true},
		{H200, 448, 4096, 2, 7, 2048*115/100 + 256 + 128, true},
		{H200, 64, 511, 2, 0, 0, false},  // a split under 256 positions
		{A100, 64, 4096, 2, 0, 0, false}, // no cluster slots
		{H200, 0, 4096, 1, 0, 0, false},
	} {
		if r, i, ok := GemmWGSplitCost(c.t, c.tiles, c.k, c.s); r != c.rounds || i != c.item || ok != c.ok {
			t.Errorf("%s, %d tiles, K %d, %d splits: %d rounds of %d, ok %v; want %d of %d, %v", c.t.Name, c.tiles, c.k, c.s, r, i, ok, c.rounds, c.item, c.ok)
		}
	}
	if s, n, _ := GemmWGSplits(A100, 16, 14336); s != 1 || n != 16 {
		t.Errorf("A100, 16 tiles: %d splits, %d clusters; want unsplit, 16", s, n)
	}
}

// TestGemmWGWork walks every block's work indices of split wgmma GEMM
// launches over a grid of item and block counts, in clusters of two or
// not, every item split or the last round only, as the kernel does
// (GemmWGFull, GemmWGWork; fz_gemm_wg_full and fz_gemm_wg_work on the
// device), and checks that each item is taken once: by one block, or by
// the two blocks of one cluster as ranks 0 and 1; that every block takes
// as many unsplit items as the others; and that where only the last round
// splits, the items split are those past the whole rounds, no more than
// the clusters.
func TestGemmWGWork(t *testing.T) {
	const s = 2
	for blocks := int64(2); blocks <= 140; blocks += 2 {
		for nit := int64(1); nit <= 600; nit += 1 + nit/40 {
			for _, mode := range []struct{ tail, paired bool }{{false, true}, {true, true}, {false, false}, {true, false}} {
				full := GemmWGFull(nit, blocks, s, mode.tail, mode.paired)
				switch {
				case !mode.paired && full != nit, mode.paired && !mode.tail && full != 0:
					t.Fatalf("%d items, %d blocks, %+v: %d unsplit", nit, blocks, mode, full)
				case mode.paired && mode.tail && full != nit && (full%blocks != 0 || full > nit || (nit-full)*s > blocks):
					t.Fatalf("%d items, %d blocks, last round: %d unsplit", nit, blocks, full)
				}
				type take struct{ block, rank, splits int64 }
				takes := make([][]take, nit)
				unsplit := map[int64]int64{}
				for b := int64(0); b < blocks; b++ {
					for wi := b; wi < full+s*(nit-full); wi += blocks {
						item, n := GemmWGWork(wi, full, s)
						if item < 0 || item >= nit {
							t.Fatalf("%d items, %d blocks, %+v: block %d index %d takes item %d", nit, blocks, mode, b, wi, item)
						}
						rank := int64(0)
						if n > 1 {
							rank = b % s
						} else {
							unsplit[b]++
						}
						takes[item] = append(takes[item], take{b, rank, n})
					}
				}
				for i, tk := range takes {
					ok := len(tk) == 1 && tk[0].splits == 1 ||
						len(tk) == s && tk[0].splits == s && tk[1].splits == s && tk[0].rank != tk[1].rank && tk[0].block/s == tk[1].block/s
					if !ok {
						t.Fatalf("%d items, %d blocks, %+v: item %d taken by %v", nit, blocks, mode, i, tk)
					}
				}
				if full > 0 && full%blocks == 0 {
					for b := int64(0); b < blocks; b++ {
						if unsplit[b] != full/blocks {
							t.Fatalf("%d items, %d blocks, %+v: block %d takes %d unsplit items, want %d", nit, blocks, mode, b, unsplit[b], full/blocks)
						}
					}
				}
			}
		}
	}
}
