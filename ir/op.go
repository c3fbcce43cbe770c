package ir

// Op is the operation a node computes.
type Op int

// The IR's operations. Leaves first, then by pattern kind.
const (
	OpInput Op = iota
	OpParam
	OpState
	OpConst // a scalar number
	OpSeqLens

	OpNeg
	OpExp
	OpLog
	OpSqrt
	OpRsqrt
	OpTanh
	OpSilu
	OpGelu
	OpSigmoid
	OpCast
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpMax
	OpMin
	OpSoftcap

	OpCausal
	OpWindow
	OpRope

	OpReshape
	OpTranspose
	OpSplit
	OpConcat
	OpSlice
	OpGather

	OpSum
	OpReduceMax
	OpMean
	OpSoftmax
	OpTopK

	OpMatmul

	OpAppend
	// OpAttention is fused softmax attention, produced by the attention pass
	// from its written form; it is never written in a spec.
	OpAttention
	numOps
)

// Pattern is an op's fusion pattern kind, after TVM's FuseOps: fusion rules
// read the pattern (and the op's Kind where they treat some ops of a
// pattern apart), never the op.
type Pattern int

// The pattern kinds, from most to least fusible.
const (
	// ElemWise ops map each output element from the same element of each input.
	ElemWise Pattern = iota
	// Broadcast ops are element-wise with some inputs stretched along axes.
	Broadcast
	// Injective ops move elements without arithmetic (reshape, transpose, split).
	Injective
	// Reduction ops combine elements along an axis.
	Reduction
	// OutEWiseFusable ops (matmul) accept element-wise consumers as an epilogue.
	OutEWiseFusable
	// Opaque ops are kernels of their own (leaves, cache writes).
	Opaque
)

var patternNames = [...]string{"elemwise", "broadcast", "injective", "reduction", "out-elemwise-fusable", "opaque"}

// String names the pattern kind.
func (p Pattern) String() string { return patternNames[p] }

// OpInfo describes an op.
type OpInfo struct {
	Name    string
	Pattern Pattern
	// Flops is the arithmetic per output element of element-wise ops, used by
	// the cost model (transcendentals count as one).
	Flops int
}

var opInfo = [numOps]OpInfo{
	OpInput:     {"input", Opaque, 0},
	OpParam:     {"param", Opaque, 0},
	OpState:     {"state", Opaque, 0},
	OpConst:     {"const", ElemWise, 0},
	OpSeqLens:   {"seqlens", Opaque, 1},
	OpNeg:       {"neg", ElemWise, 1},
	OpExp:       {"exp", ElemWise, 1},
	OpLog:       {"log", ElemWise, 1},
	OpSqrt:      {"sqrt", ElemWise, 1},
	OpRsqrt:     {"rsqrt", ElemWise, 1},
	OpTanh:      {"tanh", ElemWise, 1},
	OpSilu:      {"silu", ElemWise, 4},
	OpGelu:      {"gelu", ElemWise, 8},
	OpSigmoid:   {"sigmoid", ElemWise, 3},
	OpCast:      {"cast", ElemWise, 0},
	OpAdd:       {"add", Broadcast, 1},
	OpSub:       {"sub", Broadcast, 1},
	OpMul:       {"mul", Broadcast, 1},
	OpDiv:       {"div", Broadcast, 1},
	OpMax:       {"max", Broadcast, 1},
	OpMin:       {"min", Broadcast, 1},
	OpSoftcap:   {"softcap", ElemWise, 3},
	OpCausal:    {"causal", ElemWise, 1},
	OpWindow:    {"window", ElemWise, 2},
	OpRope:      {"rope", Injective, 3},
	OpReshape:   {"reshape", Injective, 0},
	OpTranspose: {"transpose", Injective, 0},
	OpSplit:     {"split", Injective, 0},
	OpConcat:    {"concat", Injective, 0},
	OpSlice:     {"slice", Injective, 0},
	OpGather:    {"gather", Injective, 0},
	OpSum:       {"sum", Reduction, 1},
	OpReduceMax: {"reduce_max", Reduction, 1},
	OpMean:      {"mean", Reduction, 1},
	OpSoftmax:   {"softmax", Reduction, 5},
	OpTopK:      {"topk", Reduction, 1},
	OpMatmul:    {"matmul", OutEWiseFusable, 2},
	OpAppend:    {"append", Opaque, 0},
	OpAttention: {"attention", Opaque, 0},
}

// Kind is an op's role where the fusion rules need more than its pattern
// kind: the ops a rule treats apart from the others of their pattern. Most
// ops are KindPlain; fusion rules read the pattern and the kind, never the
// op.
type Kind int

// The op kinds.
const (
	// KindPlain ops are described by their pattern alone.
	KindPlain Kind = iota
	// KindConst is a scalar constant: its users compute it in place, so it
	// never joins a kernel on its own.
	KindConst
	// KindMask ops (causal, window) hide scores: they belong to attention,
	// never to a matmul epilogue.
	KindMask
	// KindRope rotates pairs of elements of a row by position: injective,
	// but computable per output element from the row it reads, so a matmul
	// epilogue may apply it; alone it is a copy kernel.
	KindRope
	// KindGather ops move elements by index or from several tensors
	// (gather, concat): a copy kernel materialises them.
	KindGather
	// KindAppend writes new keys and values into a KV cache: a matmul
	// epilogue may do it, and its result is always materialised.
	KindAppend
	// KindAttention is fused softmax attention, a kernel of its own.
	KindAttention
)

var opKinds = [numOps]Kind{
	OpConst:     KindConst,
	OpCausal:    KindMask,
	OpWindow:    KindMask,
	OpRope:      KindRope,
	OpGather:    KindGather,
	OpConcat:    KindGather,
	OpAppend:    KindAppend,
	OpAttention: KindAttention,
}

// Kind returns the op's kind.
func (o Op) Kind() Kind { return opKinds[o] }

// Info returns the op's description.
func (o Op) Info() OpInfo { return opInfo[o] }

// String names the op.
func (o Op) String() string {
	if o < 0 || o >= numOps {
		return "?"
	}
	return opInfo[o].Name
}

// IsLeaf reports whether the op has no inputs and stands for a tensor the
// caller provides.
func (o Op) IsLeaf() bool { return o == OpInput || o == OpParam || o == OpState }
