package interp

import (
	"fmt"
	"math"

	"github.com/fuser-dev/fuser/ir"
)

// attention computes a fused attention node (ir.OpAttention): for query i
// of head h of sequence b, over the keys of kv head h / (H/G),
// s_j = softcap((q · k_j) * Scale + BiasScale * bias_j) (no cap when Softcap
// is 0, no bias without Bias; bias_j the bias at key position j of the
// sequence's keys, broadcast over its size-1 axes), masked as the
// written causal / window ops do (query i sits at key position
// Tk_eff - S + i; Causal masks keys after it, a non-zero Window masks keys
// Window or more positions before it), then softmax over the existing keys
// and the weighted sum of the values. A cascade node's keys are the shared
// prefix Kp, Vp [1, G, L, Dh] followed by K, V. Keys stored transposed
// (KeysT, K [B, G, Dh, T]) are read as their transpose. Keys past a ragged K's or
// V's length do not exist; a query with every key masked gives 0. Packed
// queries (Varlen) are varlenAttention's.
func (m *machine) attention(n *ir.Node, args []*Tensor, out []int) (*Tensor, error) {
	at := n.Attr.Attn
	if at == nil {
		return nil, fmt.Errorf("attention node without a variant")
	}
	if at.Varlen {
		return m.varlenAttention(n, args, out)
	}
	want := 3
	if at.Cascade {
		want = 5
	}
	if at.Bias {
		want++
	}
	if len(args) != want {
		return nil, fmt.Errorf("attention has %d arguments, want %d", len(args), want)
	}
	var biasArg *Tensor
	if at.Bias {
		biasArg, args = args[want-1], args[:want-1]
	}
	q := args[0]
	if len(q.Shape) != 4 || !equalInts(out, q.Shape) {
		return nil, fmt.Errorf("attention query %v, result %v", q.Shape, out)
	}
	B, H, S, Dh := q.Shape[0], q.Shape[1], q.Shape[2], q.Shape[3]
	window := 0
	if !at.Window.IsZero() {
		var err error
		if window, err = m.dim(at.Window); err != nil {
			return nil, err
		}
	}
	// The key sources, in key order: (K, V) pairs with their validity.
	type source struct {
		k, v   *Tensor
		vk, vv *validity
	}
	var srcs []source
	for i := 1; i < len(args); i += 2 {
		k, v := args[i], args[i+1]
		if at.KeysT && len(k.Shape) == 4 {
			k = transpose(k, []int{0, 1, 3, 2})
		}
		for _, t := range []*Tensor{k, v} {
			if len(t.Shape) != 4 || t.Shape[3] != Dh || (t.Shape[0] != B && t.Shape[0] != 1) ||
				t.Shape[1] < 1 || H%t.Shape[1] != 0 || !equalInts(t.Shape, k.Shape) {
				return nil, fmt.Errorf("attention keys %v and values %v for queries %v", k.Shape, v.Shape, q.Shape)
			}
		}
		vk, err := m.validity(n.Args[i], k.Shape)
		if err != nil {
			return nil, err
		}
		vv, err := m.validity(n.Args[i+1], v.Shape)
		if err != nil {
			return nil, err
		}
		if (vk != nil && n.Args[i].Ragged.Axis != 2) || (vv != nil && n.Args[i+1].Ragged.Axis != 2) {
			return nil, fmt.Errorf("attention keys may be ragged only along their token axis")
		}
		srcs = append(srcs, source{k, v, vk, vv})
	}
	var bias *scoreBias
	if biasArg != nil {
		keys := 0
		for _, s := range srcs {
			keys += s.k.Shape[2]
		}
		var err error
		if bias, err = newScoreBias(biasArg, B, H, S, keys); err != nil {
			return nil, err
		}
	}
	res := New(out...)
	var scores []float64
	var keys []attnKey
	for b := range B {
		for h := range H {
			// Gather this head's existing keys in order.
			keys = keys[:0]
			for _, s := range srcs {
				G, T := s.k.Shape[1], s.k.Shape[2]
				bb := min(b, s.k.Shape[0]-1)
				g := h / (H / G)
				base := (bb*G + g) * T * Dh
				cnt := min(s.vk.limitAt(base, T), s.vv.limitAt(base, T))
				for j := range cnt {
					keys = append(keys, attnKey{s.k.Data[base+j*Dh : base+(j+1)*Dh], s.v.Data[base+j*Dh : base+(j+1)*Dh]})
				}
			}
			tk := len(keys)
			if cap(scores) < tk {
				scores = make([]float64, tk)
			}
			scores = scores[:tk]
			for i := range S {
				var brow []float64
				if bias != nil {
					brow = bias.row(b, h, i)
				}
				attendRow(at, window, q.Data[((b*H+h)*S+i)*Dh:][:Dh], keys, tk-S+i, brow, scores, res.Data[((b*H+h)*S+i)*Dh:][:Dh])
			}
		}
	}
	return res, nil
}

// attnKey is one existing key of a head: its key and value rows.
type attnKey struct{ k, v []float64 }

// attendRow adds to o the attention of query row qv at key position pos
// over keys (scores is scratch of len(keys)): the scores as the node's
// variant computes them (bias the query's bias row, nil without one),
// masked, softmax, and the weighted sum of the values; o stays 0 when every
// key is masked.
func attendRow(at *ir.Attention, window int, qv []float64, keys []attnKey, pos int, bias, scores, o []float64) {
	mx := math.Inf(-1)
	for j, kv := range keys {
		if (at.Causal && j > pos) || (window > 0 && j <= pos-window) {
			scores[j] = math.Inf(-1)
			continue
		}
		d := 0.0
		for x := range qv {
			d += qv[x] * kv.k[x]
		}
		d *= at.Scale
		if bias != nil {
			d += at.BiasScale * bias[j]
		}
		if at.Softcap != 0 {
			d = at.Softcap * math.Tanh(d/at.Softcap)
		}
		scores[j] = d
		mx = math.Max(mx, d)
	}
	if math.IsInf(mx, -1) {
		return
	}
	sum := 0.0
	for j := range scores {
		scores[j] = math.Exp(scores[j] - mx)
		sum += scores[j]
	}
	for j, kv := range keys {
		p := scores[j] / sum
		for x := range o {
			o[x] += p * kv.v[x]
		}
	}
}

// keyRows is the shape of keys of shape sh in the key-major order
// [B, G, T, Dh]: the last two axes swapped where they are stored
// transposed.
func keyRows(sh []int, keysT bool) []int {
	if !keysT || len(sh) != 4 {
		return sh
	}
	return []int{sh[0], sh[1], sh[3], sh[2]}
}
