package interp

import (
	"fmt"
	"math"
)

// FlashKV is one source of keys and values for FlashAttention: K and V of
// shape [Bk, G, T, Dh], where Bk is the query batch B, or 1 for a source
// every sequence shares (a cascade's prefix). Query head h reads kv head
// h / (H/G).
type FlashKV struct {
	K, V *Tensor
	// KeysT says K is stored transposed, [B, G, Dh, T] (V stays
	// [B, G, T, Dh]): the dot products read a key as a column.
	KeysT bool
	// Lens[bk*G+g] is the number of keys that exist for sequence bk (of
	// the source's batch) and kv head g: keys Lens[bk*G+g].. do not exist.
	// nil means T everywhere.
	Lens []int
}

// FlashConfig is the variant and the schedule of a FlashAttention call.
type FlashConfig struct {
	// Scale multiplies q·k; Softcap, when not 0, caps the scaled score s
	// to Softcap*tanh(s/Softcap) before the mask.
	Scale, Softcap float64
	// Causal masks keys after the query; Window, when positive, also masks
	// keys Window or more positions before it. Query i of a sequence with
	// Tk keys in all (prefix and own) sits at key position Tk - S + i.
	Causal bool
	Window int
	// Bias, when not nil, is added to the scaled scores before softcap,
	// times BiasScale: a tensor broadcasting to the scores [B, H, S, N]
	// (aligned from the right) over the N keys of a sequence, prefix and
	// own (key j of the own keys at N's position prefix keys + j).
	Bias      *Tensor
	BiasScale float64
	// Br and Bc are the query and key tile sizes (64 when 0). Decode
	// walks all the query rows of a head group at once; Br then tiles only
	// the rows of a cascade's prefix pass.
	Br, Bc int
	// Decode selects split-KV Flash-Decoding with Splits splits of each
	// sequence's own keys (1 when 0); otherwise the keys are walked by
	// FlashAttention-2's prefill tiling.
	Decode bool
	Splits int
	// Stats, when not nil, receives the counts of the work done.
	Stats *FlashStats
}

// FlashStats counts the work of FlashAttention calls (it accumulates).
type FlashStats struct {
	// Tiles are the Br×Bc score blocks computed (decode: rows×Bc) and
	// Skipped the key tiles of a row block skipped whole because no query
	// row of the block can see any of their keys (causal tile skipping,
	// and keys before a sliding window). Masked are the computed tiles that
	// needed the element-wise mask (diagonal and window-edge tiles).
	Tiles, Skipped, Masked int
	// Partials are the (m, ℓ, õ) partial results written, one per query
	// row and part (split or cascade prefix), and EmptySplits the decode
	// splits with no key for their (sequence, kv head).
	Partials, EmptySplits int
}

// flashRow is one query row of a tile: its query vector, its position among
// the keys of its sequence, and where its partial result goes.
type flashRow struct {
	q   []float64
	pos int
	idx int
	// bias is the row's bias from the walked source's key 0, nil without
	// one.
	bias []float64
}

// flashPart holds the partial results (m, ℓ, õ) of a set of query rows over
// part of their keys: the running max m of the scores, the sum ℓ of
// exp(s - m) and the unnormalised output õ = Σ exp(s - m)·v. A row that saw
// no key has m = -Inf, ℓ = 0, õ = 0.
type flashPart struct {
	dh   int
	m, l []float64
	acc  []float64
}

func newFlashPart(rows, dh int) *flashPart {
	p := &flashPart{dh: dh, m: make([]float64, rows), l: make([]float64, rows), acc: make([]float64, rows*dh)}
	for i := range p.m {
		p.m[i] = math.Inf(-1)
	}
	return p
}

// flashSrc is a checked FlashKV.
type flashSrc struct {
	k, v         []float64
	bk, g, t, dh int
	lens         []int
	// keysT: k is [B, G, Dh, T] (FlashKV.KeysT).
	keysT bool
}

// n returns the number of keys of sequence b, kv head g.
func (s *flashSrc) n(b, g int) int {
	bb := min(b, s.bk-1)
	if s.lens == nil {
		return s.t
	}
	return s.lens[bb*s.g+g]
}

// row returns the offset of key j of sequence b, kv head g.
func (s *flashSrc) row(b, g, j int) int {
	return ((min(b, s.bk-1)*s.g+g)*s.t + j) * s.dh
}

// dot is q · k_j for key j of sequence b, kv head g: along its row, or
// down its column of keys stored transposed.
func (s *flashSrc) dot(q []float64, b, g, j int) float64 {
	d := 0.0
	if s.keysT {
		col := (min(b, s.bk-1)*s.g+g)*s.dh*s.t + j
		for x := range s.dh {
			d += q[x] * s.k[col+x*s.t]
		}
		return d
	}
	kr := s.k[s.row(b, g, j):][:s.dh]
	for x := range s.dh {
		d += q[x] * kr[x]
	}
	return d
}

func checkFlashKV(what string, kv *FlashKV, B, H, Dh int) (*flashSrc, error) {
	k, v := kv.K, kv.V
	if k == nil || v == nil {
		return nil, fmt.Errorf("flash: %s keys or values missing", what)
	}
	ks := k.Shape
	if kv.KeysT && len(ks) == 4 {
		ks = []int{ks[0], ks[1], ks[3], ks[2]}
	}
	if len(ks) != 4 || !equalInts(ks, v.Shape) || v.Shape[3] != Dh || (k.Shape[0] != B && k.Shape[0] != 1) ||
		k.Shape[1] < 1 || H%k.Shape[1] != 0 || len(k.Data) != numElements(k.Shape) || len(v.Data) != numElements(v.Shape) {
		return nil, fmt.Errorf("flash: %s keys %v and values %v for queries [%d %d _ %d]", what, k.Shape, v.Shape, B, H, Dh)
	}
	s := &flashSrc{k: k.Data, v: v.Data, bk: v.Shape[0], g: v.Shape[1], t: v.Shape[2], dh: Dh, lens: kv.Lens, keysT: kv.KeysT}
	if s.lens != nil {
		if len(s.lens) != s.bk*s.g {
			return nil, fmt.Errorf("flash: %s has %d lengths, want %d (batch × kv heads)", what, len(s.lens), s.bk*s.g)
		}
		for i, n := range s.lens {
			if n < 0 || n > s.t {
				return nil, fmt.Errorf("flash: %s length %d (entry %d) is out of [0, %d]", what, n, i, s.t)
			}
		}
	}
	return s, nil
}

// flash is one FlashAttention call.
type flash struct {
	cfg    FlashConfig
	stats  FlashStats
	scores []float64
}

// FlashAttention computes softmax attention of q [B, H, S, Dh] over the keys
// of prefix (a cascade's shared prefix; nil for none) followed by those of
// kv, with the algorithms of the GPU kernels, and returns the output
// [B, H, S, Dh] and the log-sum-exp of every query row's visible scores
// [B, H, S] (-Inf for a row that sees no key; its output is 0).
//
// Scores are s = softcap((q·k)·Scale + BiasScale·bias), then masked. Each part of the keys
// produces, per query row, a partial (m, ℓ, õ) by the online softmax over
// key tiles of Bc keys (rescaling ℓ and õ by exp(m_old - m_new) whenever the
// running max grows), and the parts are merged by the log-sum-exp operator
// M = max m_p, ℓ = Σ ℓ_p·exp(m_p - M), o = Σ õ_p·exp(m_p - M) / ℓ:
//
//   - prefill (FlashAttention-2): each (sequence, head) walks its queries in
//     tiles of Br rows; a row tile skips the key tiles entirely after its
//     last query's position (causal) or entirely before its first query's
//     window, and masks element by element only in the tiles crossing a
//     boundary (the diagonal tile).
//   - decode (Flash-Decoding): each (sequence, kv head, split) computes the
//     partials of all the query rows of the head group (H/G heads × S) over
//     its chunk of the sequence's own keys: chunk c = ceil(n_b / Splits)
//     keys, split i covering [i·c, min((i+1)·c, n_b)); splits past the end
//     are empty (m = -Inf, ℓ = 0) and drop out of the merge.
//   - cascade: the shared prefix is attended once, for the query rows of
//     every sequence together (in row tiles of Br), as one more partial.
func FlashAttention(q *Tensor, prefix *FlashKV, kv FlashKV, cfg FlashConfig) (out, lse *Tensor, err error) {
	if q == nil || len(q.Shape) != 4 || len(q.Data) != numElements(q.Shape) {
		return nil, nil, fmt.Errorf("flash: queries must be [B, H, S, Dh]")
	}
	B, H, S, Dh := q.Shape[0], q.Shape[1], q.Shape[2], q.Shape[3]
	own, err := checkFlashKV("kv", &kv, B, H, Dh)
	if err != nil {
		return nil, nil, err
	}
	var pre *flashSrc
	if prefix != nil {
		if pre, err = checkFlashKV("prefix", prefix, B, H, Dh); err != nil {
			return nil, nil, err
		}
	}
	if cfg.Br <= 0 {
		cfg.Br = 64
	}
	if cfg.Bc <= 0 {
		cfg.Bc = 64
	}
	if cfg.Splits <= 0 {
		cfg.Splits = 1
	}
	f := &flash{cfg: cfg}
	rows := B * H * S
	// The query position of row (b, h, i) counts every key of its sequence.
	pos := func(b, h, i int) int {
		total := own.n(b, h/(H/own.g))
		if pre != nil {
			total += pre.n(b, h/(H/pre.g))
		}
		return total - S + i
	}
	var bias *scoreBias
	if cfg.Bias != nil {
		keys := own.t
		if pre != nil {
			keys += pre.t
		}
		if bias, err = newScoreBias(cfg.Bias, B, H, S, keys); err != nil {
			return nil, nil, fmt.Errorf("flash: %w", err)
		}
	}
	// qrow is query row (b, h, i) for walking a source whose key 0 sits at
	// position base of the sequence's keys: its position relative to it.
	qrow := func(b, h, i, base int) flashRow {
		idx := (b*H+h)*S + i
		r := flashRow{q: q.Data[idx*Dh : (idx+1)*Dh], pos: pos(b, h, i) - base, idx: idx}
		if bias != nil {
			r.bias = bias.row(b, h, i)[base:]
		}
		return r
	}
	// base is the position of the first own key of query head h: after the
	// prefix's keys.
	base := func(b, h int) int {
		if pre == nil {
			return 0
		}
		return pre.n(b, h/(H/pre.g))
	}
	var parts []*flashPart
	if pre != nil {
		// The shared prefix, attended once: per kv head, the query rows of
		// every sequence (of the head group) in tiles of Br rows.
		p := newFlashPart(rows, Dh)
		parts = append(parts, p)
		groups := [][]int{nil} // sequences reading the same prefix keys
		if pre.bk > 1 {
			groups = groups[:0]
			for b := range B {
				groups = append(groups, []int{b})
			}
		} else {
			for b := range B {
				groups[0] = append(groups[0], b)
			}
		}
		for _, seqs := range groups {
			for g := range pre.g {
				var block []flashRow
				for _, b := range seqs {
					for h := g * (H / pre.g); h < (g+1)*(H/pre.g); h++ {
						for i := range S {
							block = append(block, qrow(b, h, i, 0))
						}
					}
				}
				n := pre.n(seqs[0], g)
				for r0 := 0; r0 < len(block); r0 += f.cfg.Br {
					f.tiles(block[r0:min(r0+f.cfg.Br, len(block))], pre, seqs[0], g, 0, n, p)
				}
			}
		}
	}
	if !cfg.Decode {
		p := newFlashPart(rows, Dh)
		parts = append(parts, p)
		var block []flashRow
		for b := range B {
			for h := range H {
				g := h / (H / own.g)
				n := own.n(b, g)
				for i0 := 0; i0 < S; i0 += f.cfg.Br {
					block = block[:0]
					for i := i0; i < min(i0+f.cfg.Br, S); i++ {
						block = append(block, qrow(b, h, i, base(b, h)))
					}
					f.tiles(block, own, b, g, 0, n, p)
				}
			}
		}
	} else {
		split := make([]*flashPart, cfg.Splits)
		for i := range split {
			split[i] = newFlashPart(rows, Dh)
		}
		parts = append(parts, split...)
		var block []flashRow
		for b := range B {
			for g := range own.g {
				block = block[:0]
				for h := g * (H / own.g); h < (g+1)*(H/own.g); h++ {
					for i := range S {
						block = append(block, qrow(b, h, i, base(b, h)))
					}
				}
				n := own.n(b, g)
				chunk := (n + cfg.Splits - 1) / cfg.Splits
				for s := range cfg.Splits {
					lo, hi := s*chunk, min((s+1)*chunk, n)
					if lo >= hi {
						f.stats.EmptySplits++
						continue
					}
					f.tiles(block, own, b, g, lo, hi, split[s])
				}
			}
		}
	}
	f.stats.Partials += rows * len(parts)
	out, lse = f.merge(parts, q.Shape)
	if cfg.Stats != nil {
		s := cfg.Stats
		s.Tiles += f.stats.Tiles
		s.Skipped += f.stats.Skipped
		s.Masked += f.stats.Masked
		s.Partials += f.stats.Partials
		s.EmptySplits += f.stats.EmptySplits
	}
	return out, lse, nil
}

// visible returns the key positions row r may see: [lo, hi] (keys after
// the query are masked when causal, keys Window or more positions before it
// when Window is positive).
func (f *flash) visible(r flashRow) (lo, hi int) {
	lo, hi = math.MinInt, math.MaxInt
	if f.cfg.Causal {
		hi = r.pos
	}
	if f.cfg.Window > 0 {
		lo = r.pos - f.cfg.Window + 1
	}
	return lo, hi
}

// tiles runs the online softmax of a block of query rows over the keys
// [lo, hi) of source s for sequence b, kv head g, in tiles of Bc keys from
// lo; the rows' positions are relative to the source's key 0. Tiles that
// no row of the block can see are skipped; the others are masked element by
// element only when some row sees part of them.
func (f *flash) tiles(rows []flashRow, s *flashSrc, b, g, lo, hi int, p *flashPart) {
	if len(rows) == 0 {
		return
	}
	// The union of the rows' visible ranges (rows of a prefill tile are
	// consecutive queries, so it is exact there).
	minLo, maxHi := math.MaxInt, math.MinInt
	for _, r := range rows {
		l, h := f.visible(r)
		minLo, maxHi = min(minLo, l), max(maxHi, h)
	}
	bc, dh := f.cfg.Bc, s.dh
	if cap(f.scores) < bc {
		f.scores = make([]float64, bc)
	}
	for t0 := lo; t0 < hi; t0 += bc {
		t1 := min(t0+bc, hi)
		first, last := t0, t1-1
		if last < minLo || first > maxHi {
			f.stats.Skipped++
			continue
		}
		f.stats.Tiles++
		// The tile needs the element mask when a row does not see it whole.
		masked := false
		for _, r := range rows {
			if l, h := f.visible(r); first < l || last > h {
				masked = true
				break
			}
		}
		if masked {
			f.stats.Masked++
		}
		for _, r := range rows {
			rl, rh := f.visible(r)
			sc := f.scores[:t1-t0]
			mt := math.Inf(-1)
			for j := t0; j < t1; j++ {
				if masked && (j < rl || j > rh) {
					sc[j-t0] = math.Inf(-1)
					continue
				}
				d := s.dot(r.q, b, g, j) * f.cfg.Scale
				if r.bias != nil {
					d += f.cfg.BiasScale * r.bias[j]
				}
				if f.cfg.Softcap != 0 {
					d = f.cfg.Softcap * math.Tanh(d/f.cfg.Softcap)
				}
				sc[j-t0] = d
				mt = math.Max(mt, d)
			}
			if math.IsInf(mt, -1) {
				continue // the row sees no key of this tile
			}
			mOld := p.m[r.idx]
			mNew := math.Max(mOld, mt)
			alpha := math.Exp(mOld - mNew) // 0 when the row saw no key yet
			acc := p.acc[r.idx*dh : (r.idx+1)*dh]
			if alpha != 1 {
				for x := range acc {
					acc[x] *= alpha
				}
			}
			l := p.l[r.idx] * alpha
			for j := t0; j < t1; j++ {
				e := math.Exp(sc[j-t0] - mNew)
				if e == 0 {
					continue
				}
				l += e
				vr := s.v[s.row(b, g, j):][:dh]
				for x := range dh {
					acc[x] += e * vr[x]
				}
			}
			p.m[r.idx], p.l[r.idx] = mNew, l
		}
	}
}

// merge combines the partials of every query row by the log-sum-exp merge.
func (f *flash) merge(parts []*flashPart, shape []int) (out, lse *Tensor) {
	out = New(shape...)
	lse = New(shape[:3]...)
	dh := shape[3]
	for r := range lse.Data {
		M := math.Inf(-1)
		for _, p := range parts {
			M = math.Max(M, p.m[r])
		}
		if math.IsInf(M, -1) {
			lse.Data[r] = M // no visible key: the output stays 0
			continue
		}
		o := out.Data[r*dh : (r+1)*dh]
		L := 0.0
		for _, p := range parts {
			if math.IsInf(p.m[r], -1) {
				continue // an empty part
			}
			w := math.Exp(p.m[r] - M)
			L += p.l[r] * w
			for x, a := range p.acc[r*dh : (r+1)*dh] {
				o[x] += a * w
			}
		}
		for x := range o {
			o[x] /= L
		}
		lse.Data[r] = M + math.Log(L)
	}
	return out, lse
}
