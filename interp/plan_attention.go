package interp

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// attention computes an attention node with FlashAttention, scheduled as
// the kernel's launch says (see PlanOptions for the overrides). The keys of
// a ragged K or V past a sequence's length do not exist, as in the
// interpreter: each (sequence, kv head) has min(len_K, len_V) keys.
func (kr *kernelRun) attention(n *ir.Node) error {
	at := n.Attr.Attn
	if at == nil {
		return fmt.Errorf("%s: attention node without a variant", n)
	}
	if at.Varlen {
		// No flash schedule of packed queries yet: the reference's own.
		return kr.stepNode(n)
	}
	want := 3
	if at.Cascade {
		want = 5
	}
	if at.Bias {
		want++
	}
	if len(n.Args) != want {
		return fmt.Errorf("%s: attention has %d arguments, want %d", n, len(n.Args), want)
	}
	args := make([]*Tensor, len(n.Args))
	for i, a := range n.Args {
		t, err := kr.eval(a)
		if err != nil {
			return err
		}
		args[i] = t
	}
	if err := kr.lensOf(n); err != nil {
		return err
	}
	m := kr.m
	m.at = n
	window := 0
	if !at.Window.IsZero() {
		var err error
		if window, err = m.dim(at.Window); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	var bias *Tensor
	if at.Bias {
		bias, args = args[want-1], args[:want-1]
	}
	var srcs []FlashKV
	for i := 1; i < len(args); i += 2 {
		k, v := args[i], args[i+1]
		kv := FlashKV{K: k, V: v, KeysT: at.KeysT}
		if len(k.Shape) != 4 || !equalInts(keyRows(k.Shape, at.KeysT), v.Shape) {
			return fmt.Errorf("%s: attention keys %v and values %v", n, k.Shape, v.Shape)
		}
		vk, err := m.validity(n.Args[i], k.Shape)
		if err != nil {
			return err
		}
		vv, err := m.validity(n.Args[i+1], v.Shape)
		if err != nil {
			return err
		}
		if (vk != nil && n.Args[i].Ragged.Axis != 2) || (vv != nil && n.Args[i+1].Ragged.Axis != 2) {
			return fmt.Errorf("%s: attention keys may be ragged only along their token axis", n)
		}
		if vk != nil || vv != nil {
			Bk, G, T, Dh := v.Shape[0], v.Shape[1], v.Shape[2], v.Shape[3]
			kv.Lens = make([]int, Bk*G)
			for b := range Bk {
				for g := range G {
					base := (b*G + g) * T * Dh
					kv.Lens[b*G+g] = min(vk.limitAt(base, T), vv.limitAt(base, T))
				}
			}
		}
		srcs = append(srcs, kv)
	}
	cfg := kr.flashConfig(at, window)
	cfg.Bias, cfg.BiasScale = bias, at.BiasScale
	var prefix *FlashKV
	if at.Cascade {
		prefix = &srcs[0]
	}
	out, _, err := FlashAttention(args[0], prefix, srcs[len(srcs)-1], cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", n, err)
	}
	return kr.store(n, []*Tensor{out})
}

// flashConfig is the FlashAttention schedule of the kernel: its launch's
// variant, split count and tile, with PlanOptions' overrides.
func (kr *kernelRun) flashConfig(at *ir.Attention, window int) FlashConfig {
	cfg := FlashConfig{Scale: at.Scale, Softcap: at.Softcap, Causal: at.Causal, Window: window, Br: 64, Bc: 64, Splits: 1, Stats: kr.pr.opt.FlashStats}
	if l := kr.k.Launch; l != nil {
		if l.Tile[0] > 0 {
			cfg.Br = int(l.Tile[0])
		}
		if l.Tile[1] > 0 {
			cfg.Bc = int(l.Tile[1])
		}
		cfg.Decode = l.Variant.Decode()
		cfg.Splits = max(int(l.Splits), 1)
	}
	o := kr.pr.opt
	if o.Br > 0 {
		cfg.Br = o.Br
	}
	if o.Bc > 0 {
		cfg.Bc = o.Bc
	}
	if o.Splits > 0 {
		cfg.Splits = o.Splits
	}
	return cfg
}
