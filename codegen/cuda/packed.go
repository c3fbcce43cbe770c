package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// packedSeq is the sequence of packed token n of p's axis:
// fz_packed_seq over p's indptr.
func (k *kgen) packedSeq(p *ir.Packed, n ix) (ix, error) {
	indptr, err := k.name(p.Indptr)
	if err != nil {
		return ix{}, err
	}
	return ixv(fmt.Sprintf("fz_packed_seq(%s, %s, %s)", indptr, dimIx(ir.PackedSeqs(p)), n)), nil
}

// packedRest is the tokens of packed token n's sequence from n on,
// indptr[b+1] - n.
func (k *kgen) packedRest(p *ir.Packed, n ix) (ix, error) {
	seq, err := k.packedSeq(p, n)
	if err != nil {
		return ix{}, err
	}
	indptr, err := k.name(p.Indptr)
	if err != nil {
		return ix{}, err
	}
	return ixv(fmt.Sprintf("((i64)%s[%s + 1] - %s)", indptr, seq, n)), nil
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
		seq, err := k.packedSeq(p, idx[1])
		if err != nil {
			return "", ix{}, err
		}
		indptr, _ := k.name(p.Indptr)
		sb := k.fresh("sb")
		w.line("const i64 %s = %s;", sb, seq)
		b, g, s = ixv(sb), idx[0], ixv(fmt.Sprintf("(%s - (i64)%s[%s])", idx[1], indptr, sb))
	} else {
		b, g, s = idx[0], idx[1], idx[2]
	}
	ptr, err := k.cacheRowPtr(app, c, b, g, s)
	return ptr, idx[len(idx)-1], err
}
