package interp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// flashRand returns a tensor of values uniform in [-1, 1).
func flashRand(rng *rand.Rand, shape ...int) *Tensor {
	t := New(shape...)
	for i := range t.Data {
		t.Data[i] = 2*rng.Float64() - 1
	}
	return t
}

// flashErr is max |got-want| / max |want|; infinities must match exactly.
func flashErr(got, want []float64) float64 {
	return relativeError(got, want)
}

// naiveAttention is attention written the plain way: for each query row,
// every score of the prefix's then the sequence's own keys, masked, a
// two-pass softmax and the weighted sum of the values. It returns the
// output and the log-sum-exp of each row (-Inf when no key is visible).
func naiveAttention(q *Tensor, prefix *FlashKV, kv FlashKV, cfg FlashConfig) (out, lse []float64) {
	B, H, S, Dh := q.Shape[0], q.Shape[1], q.Shape[2], q.Shape[3]
	out = make([]float64, len(q.Data))
	lse = make([]float64, B*H*S)
	type key struct{ k, v []float64 }
	gather := func(src *FlashKV, b, h int) []key {
		if src == nil {
			return nil
		}
		Bk, G, T := src.K.Shape[0], src.K.Shape[1], src.K.Shape[2]
		bb, g := min(b, Bk-1), h/(H/G)
		n := T
		if src.Lens != nil {
			n = src.Lens[bb*G+g]
		}
		var keys []key
		for j := range n {
			off := ((bb*G+g)*T + j) * Dh
			keys = append(keys, key{src.K.Data[off : off+Dh], src.V.Data[off : off+Dh]})
		}
		return keys
	}
	for b := range B {
		for h := range H {
			keys := append(gather(prefix, b, h), gather(&kv, b, h)...)
			tk := len(keys)
			for i := range S {
				row := (b*H+h)*S + i
				qv := q.Data[row*Dh : (row+1)*Dh]
				pos := tk - S + i
				s := make([]float64, tk)
				mx := math.Inf(-1)
				for j, k := range keys {
					if (cfg.Causal && j > pos) || (cfg.Window > 0 && j <= pos-cfg.Window) {
						s[j] = math.Inf(-1)
						continue
					}
					d := 0.0
					for x := range Dh {
						d += qv[x] * k.k[x]
					}
					d *= cfg.Scale
					if cfg.Softcap != 0 {
						d = cfg.Softcap * math.Tanh(d/cfg.Softcap)
					}
					s[j] = d
					mx = math.Max(mx, d)
				}
				lse[row] = mx
				if math.IsInf(mx, -1) {
					continue
				}
				sum := 0.0
				for j := range s {
					s[j] = math.Exp(s[j] - mx)
					sum += s[j]
				}
				lse[row] = mx + math.Log(sum)
				o := out[row*Dh : (row+1)*Dh]
				for j, k := range keys {
					for x := range Dh {
						o[x] += s[j] / sum * k.v[x]
					}
				}
			}
		}
	}
	return out, lse
}

// flashVariants are the masks and caps the flash tests cover.
var flashVariants = []struct {
	name string
	cfg  FlashConfig
}{
	{"full", FlashConfig{Scale: 0.7}},
	{"causal", FlashConfig{Scale: 0.7, Causal: true}},
	{"window5", FlashConfig{Scale: 0.7, Causal: true, Window: 5}},
	{"window33", FlashConfig{Scale: 0.7, Causal: true, Window: 33}},
	{"softcap", FlashConfig{Scale: 3, Softcap: 1.5, Causal: true}},
	{"softcap-window", FlashConfig{Scale: 3, Softcap: 1.5, Causal: true, Window: 20}},
}

// flashTiles are the (Br, Bc) tiles the flash tests cover.
var flashTiles = [][2]int{{16, 16}, {64, 32}, {128, 64}}

// flashInputs returns queries [2, H, S, 8] and keys [2, G, T, 8]: sequence
// 0 with all T keys, sequence 1 with a random number in [0, T] (0 for some
// cases, so that rows without any key and empty splits occur) when ragged;
// with L > 0, a shared prefix [1, G, L, 8].
func flashInputs(seed uint64, H, G, S, T, L int, ragged bool) (*Tensor, *FlashKV, FlashKV) {
	rng := rand.New(rand.NewPCG(seed, 7))
	const B, Dh = 2, 8
	q := flashRand(rng, B, H, S, Dh)
	kv := FlashKV{K: flashRand(rng, B, G, T, Dh), V: flashRand(rng, B, G, T, Dh)}
	if ragged {
		n := rng.IntN(T + 1)
		if seed%3 == 0 {
			n = 0
		}
		kv.Lens = make([]int, B*G)
		for g := range G {
			kv.Lens[g] = T
			kv.Lens[G+g] = n
		}
	}
	var prefix *FlashKV
	if L > 0 {
		prefix = &FlashKV{K: flashRand(rng, 1, G, L, Dh), V: flashRand(rng, 1, G, L, Dh)}
	}
	return q, prefix, kv
}

// TestFlashPrefill compares FlashAttention-2 tiling with naive attention
// over tiles, key counts that are not tile multiples, query counts (decode
// rows, a partial tile, square prefill), masks, caps, GQA/MQA/MHA head
// groups, ragged lengths and a cascade prefix, output and log-sum-exp.
func TestFlashPrefill(t *testing.T) {
	seed := uint64(0)
	for _, tile := range flashTiles {
		for _, T := range []int{1, 17, 100, 257} {
			for _, S := range []int{1, 17, T} {
				for vi, va := range flashVariants {
					for _, L := range []int{0, 23} {
						seed++
						H, G := 4, []int{2, 1, 4}[(vi+T)%3]
						ragged := seed%2 == 0
						name := fmt.Sprintf("tile=%v/T=%d/S=%d/%s/G=%d/L=%d/ragged=%v", tile, T, S, va.name, G, L, ragged)
						q, prefix, kv := flashInputs(seed, H, G, S, T, L, ragged)
						cfg := va.cfg
						cfg.Br, cfg.Bc = tile[0], tile[1]
						checkFlash(t, name, q, prefix, kv, cfg)
					}
				}
			}
		}
	}
}

// TestFlashDecode compares split-KV Flash-Decoding with naive attention for
// split counts 1, 2, 7 and 64 (more splits than keys: empty splits), ragged
// sequences (one may have no key at all) and a cascade prefix.
func TestFlashDecode(t *testing.T) {
	seed := uint64(1000)
	for _, tile := range flashTiles {
		for _, T := range []int{1, 17, 100, 257} {
			for _, S := range []int{1, 3} {
				for _, splits := range []int{1, 2, 7, 64} {
					for vi, va := range flashVariants {
						for _, L := range []int{0, 23} {
							seed++
							H, G := 4, []int{2, 1, 4}[(vi+splits)%3]
							ragged := seed%2 == 0
							name := fmt.Sprintf("tile=%v/T=%d/S=%d/splits=%d/%s/G=%d/L=%d/ragged=%v", tile, T, S, splits, va.name, G, L, ragged)
							q, prefix, kv := flashInputs(seed, H, G, S, T, L, ragged)
							cfg := va.cfg
							cfg.Br, cfg.Bc = tile[0], tile[1]
							cfg.Decode, cfg.Splits = true, splits
							st := checkFlash(t, name, q, prefix, kv, cfg)
							// Empty splits: those starting at or past the end.
							want := 0
							for b := range 2 {
								n := T
								if kv.Lens != nil {
									n = kv.Lens[b*G]
								}
								chunk := (n + splits - 1) / splits
								for s := range splits {
									if s*chunk >= n {
										want++
									}
								}
							}
							if st.EmptySplits != want*G {
								t.Fatalf("%s: %d empty splits, want %d", name, st.EmptySplits, want*G)
							}
						}
					}
				}
			}
		}
	}
}

// checkFlash runs FlashAttention and naive attention and compares them.
func checkFlash(t *testing.T, name string, q *Tensor, prefix *FlashKV, kv FlashKV, cfg FlashConfig) FlashStats {
	t.Helper()
	var st FlashStats
	cfg.Stats = &st
	out, lse, err := FlashAttention(q, prefix, kv, cfg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	wantOut, wantLSE := naiveAttention(q, prefix, kv, cfg)
	if e := flashErr(out.Data, wantOut); e > 1e-12 {
		t.Fatalf("%s: output differs by %.3g (relative)", name, e)
	}
	if e := flashErr(lse.Data, wantLSE); e > 1e-12 {
		t.Fatalf("%s: log-sum-exp differs by %.3g (relative)", name, e)
	}
	return st
}

// TestFlashTileSkipping checks that prefill computes exactly the key tiles
// some query row of the row tile can see, and skips the others whole: the
// tiles after the row tile's last query (causal) and before its first
// query's window.
func TestFlashTileSkipping(t *testing.T) {
	for _, tile := range flashTiles {
		for _, c := range []struct{ S, T int }{{257, 257}, {100, 257}, {17, 100}, {300, 257}} {
			for _, va := range flashVariants {
				name := fmt.Sprintf("tile=%v/S=%d/T=%d/%s", tile, c.S, c.T, va.name)
				q, _, kv := flashInputs(5, 4, 2, c.S, c.T, 0, false)
				cfg := va.cfg
				cfg.Br, cfg.Bc = tile[0], tile[1]
				st := checkFlash(t, name, q, nil, kv, cfg)
				// Count the tiles some row sees, by brute force.
				var tiles, skipped, masked int
				for range 2 * 4 { // sequences × heads
					for i0 := 0; i0 < c.S; i0 += cfg.Br {
						for j0 := 0; j0 < c.T; j0 += cfg.Bc {
							seen, all := false, true
							for i := i0; i < min(i0+cfg.Br, c.S); i++ {
								pos := c.T - c.S + i
								for j := j0; j < min(j0+cfg.Bc, c.T); j++ {
									vis := !(cfg.Causal && j > pos) && !(cfg.Window > 0 && j <= pos-cfg.Window)
									seen = seen || vis
									all = all && vis
								}
							}
							switch {
							case !seen:
								skipped++
							case !all:
								tiles++
								masked++
							default:
								tiles++
							}
						}
					}
				}
				if st.Tiles != tiles || st.Skipped != skipped || st.Masked != masked {
					t.Fatalf("%s: computed %d tiles (%d masked), skipped %d; want %d (%d masked), %d", name, st.Tiles, st.Masked, st.Skipped, tiles, masked, skipped)
				}
				if va.cfg.Causal && c.S == c.T && c.T > cfg.Bc && st.Skipped == 0 {
					t.Fatalf("%s: causal prefill skipped no tile", name)
				}
			}
		}
	}
}

// TestFlashErrors checks that misshapen arguments are reported.
func TestFlashErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	q := flashRand(rng, 2, 4, 3, 8)
	k := flashRand(rng, 2, 3, 5, 8) // 4 heads over 3 kv heads
	if _, _, err := FlashAttention(q, nil, FlashKV{K: k, V: k}, FlashConfig{}); err == nil {
		t.Fatal("no error for 4 query heads over 3 kv heads")
	}
	k = flashRand(rng, 2, 2, 5, 8)
	if _, _, err := FlashAttention(q, nil, FlashKV{K: k, V: k, Lens: []int{1, 2, 6, 0}}, FlashConfig{}); err == nil {
		t.Fatal("no error for a length past T")
	}
	if _, _, err := FlashAttention(q, nil, FlashKV{K: k, V: flashRand(rng, 2, 2, 4, 8)}, FlashConfig{}); err == nil {
		t.Fatal("no error for keys and values of different shapes")
	}
}
