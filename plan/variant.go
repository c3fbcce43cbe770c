package plan

import "fmt"

// Variant is the path of a strategy a kernel's launch runs: which entries
// codegen writes for it and which configuration the cost model and the
// interpreter read.
type Variant int

// The launch variants.
const (
	// VariantRow is an element-wise kernel over rows (Row).
	VariantRow Variant = iota
	// VariantReduce reduces over an axis other than the last (Reduce).
	VariantReduce
	// VariantAppend writes new keys and values into a KV cache (Append).
	VariantAppend
	// VariantCopy materialises an injective op (Copy).
	VariantCopy
	// VariantGemv is the GEMV path of a Gemm kernel (few rows), split-K
	// when its blocks would not fill the SMs.
	VariantGemv
	// VariantGemm is the tensor-core tile path of a Gemm kernel.
	VariantGemm
	// VariantPrefill is tiled tensor-core attention (many queries).
	VariantPrefill
	// VariantDecode is split-KV tensor-core attention (Flash-Decoding).
	VariantDecode
	// VariantPrefillSIMT is tiled attention on CUDA cores: the fallback
	// when the tensor-core kernels cannot take the node (codegen's
	// FlashAttention capability).
	VariantPrefillSIMT
	// VariantDecodeSIMT is split-KV attention on CUDA cores, its partials
	// merged by a second launch.
	VariantDecodeSIMT
	// VariantVarlenSIMT is tiled attention over packed queries
	// (ir.Attention.Varlen) on CUDA cores: a block a (query tile of one
	// sequence, head), the grid's x the work items (VarlenItems).
	VariantVarlenSIMT
	numVariants
)

var variantNames = [numVariants]string{"row", "reduce", "append", "copy", "gemv", "gemm", "prefill", "decode", "prefill-simt", "decode-simt", "varlen-simt"}

// String names the variant.
func (v Variant) String() string {
	if v < 0 || v >= numVariants {
		return fmt.Sprintf("variant(%d)", int(v))
	}
	return variantNames[v]
}

// MarshalText writes the variant's name (plan JSON).
func (v Variant) MarshalText() ([]byte, error) {
	if v < 0 || v >= numVariants {
		return nil, fmt.Errorf("no variant %d", int(v))
	}
	return []byte(variantNames[v]), nil
}

// Decode reports whether the variant is split-KV decode attention, on
// tensor cores or CUDA cores.
func (v Variant) Decode() bool { return v == VariantDecode || v == VariantDecodeSIMT }

// Prefill reports whether the variant is tiled prefill attention, on
// tensor cores or CUDA cores.
func (v Variant) Prefill() bool { return v == VariantPrefill || v == VariantPrefillSIMT }

// SIMT reports whether the variant is attention on CUDA cores.
func (v Variant) SIMT() bool {
	return v == VariantPrefillSIMT || v == VariantDecodeSIMT || v == VariantVarlenSIMT
}

// StrategyVariant is the one variant of a strategy that has one: Row,
// Reduce, Append and Copy.
func StrategyVariant(s Strategy) (Variant, error) {
	switch s {
	case Row:
		return VariantRow, nil
	case Reduce:
		return VariantReduce, nil
	case Append:
		return VariantAppend, nil
	case Copy:
		return VariantCopy, nil
	}
	return 0, fmt.Errorf("strategy %s has more than one variant", s)
}

// UnmarshalText reads a variant's name.
func (v *Variant) UnmarshalText(b []byte) error {
	for i, name := range variantNames {
		if name == string(b) {
			*v = Variant(i)
			return nil
		}
	}
	return fmt.Errorf("unknown variant %q", b)
}
