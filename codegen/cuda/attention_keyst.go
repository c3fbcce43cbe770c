package cuda

import (
	"fmt"

	"github.com/fuser-dev/fuser/ir"
)

// emitKeysT writes, into either attention kernel's context, whether the
// keys are stored transposed, KEYST (K [B, G, Dh, T]: a key is a column of
// its buffer, its row the address of its dim 0), and with it kdo(d), the
// offset of dim d of a key from its dim 0, written by fn (its decl and
// body: a member or a static function, as the context has them). kt is
// the keys of attention at, the first of its nsrc sources.
func (k *kgen) emitKeysT(w *writer, at *ir.Attention, kt *ir.Value, nsrc int, fn func(decl, body string)) error {
	w.line("// Whether K is stored transposed, a key a column of its buffer (its row")
	w.line("// the address of its dim 0; dim d kdo(d) further).")
	w.line("static constexpr bool KEYST = %t;", at.KeysT)
	if !at.KeysT {
		return nil
	}
	vw, err := k.viewOf(kt)
	if err != nil {
		return err
	}
	if vw.cache != nil || nsrc != 1 {
		return fmt.Errorf("attention kernel %s: keys stored transposed are one source of a strided view", k.pk.Name)
	}
	a := vw.axes[2]
	fn("i64 kdo(int d)", fmt.Sprintf("return %s;", ixSub(axisOffset(a, ixv("d")), axisOffset(a, ixc(0)))))
	return nil
}
