package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// refusePacked reports an op of the kernel that finds packed tokens'
// sequences (ir.Node.SeqIndptrs) in a way no kernel generates: the
// generated kernels pair packed tokens with their sequences in an append
// (on its own or in a matmul's epilogue) and in varlen attention only; the
// unfused scores of packed queries (the pairing matmuls, their masks and
// softmax over lengths that vary per token) are refused.
func (k *kgen) refusePacked() error {
	for _, n := range k.pk.Nodes {
		if len(n.SeqIndptrs()) == 0 || n.Op == ir.OpAppend || n.Op == ir.OpAttention && n.Attr.Attn.Varlen {
			continue
		}
		return fmt.Errorf("kernel %s: %s pairing packed tokens with their sequences is not supported yet (an append and varlen attention are)", k.pk.Name, n.Op)
	}
	return nil
}

// newTokenRow is the pointer to the Dh elements of the new token at index
// idx of append app's new keys or values in the K (c = 0) or V (c = 1)
// cache, and the element's head-dim index: idx is [b, g, s, d] of a
// sequence's S tokens, or [g, n, d] of packed tokens, whose sequence b the
// indptr gives (fz_packed_seq, declared in w) and which go after its
// cached tokens, token n at len_b - (indptr[b+1] - n).
func (k *kgen) newTokenRow(w *writer, app *ir.Node, c int, idx []ix) (string, ix, error) {
	var b, g, s ix
	if p := app.Args[1].Packed; p != nil {
		indptr, err := k.name(p.Indptr)
		if err != nil {
			return "", ix{}, err
		}
		sb := k.fresh("sb")
		w.line("const i64 %s = fz_packed_seq(%s, %s, %s);", sb, indptr, dimIx(ir.PackedSeqs(p)), idx[1])
		b, g, s = ixv(sb), idx[0], ixv(fmt.Sprintf("(%s - (i64)%s[%s])", idx[1], indptr, sb))
	} else {
		b, g, s = idx[0], idx[1], idx[2]
	}
	ptr, err := k.cacheRowPtr(app, c, b, g, s)
	return ptr, idx[len(idx)-1], err
}
