package passes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fuser-dev/fuser/codegen"
	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/plan"
)

// layout lets a kernel store a value in the axis order in which the other
// kernels read it, when they all read it through the same permuting view
// (a transpose, then reshapes): attention's [B, H, S, Dh] result, read by
// the output projection as reshape(transpose(a, [0, 2, 1, 3])), is stored
// [B, S, H, Dh], and the GEMM reads its operand row-major. It applies to
// values of kernels whose stores are addressed per element (row, reduce,
// copy and attention kernels), keeps the last axis in place (the stores
// and the readers' vector loads stay contiguous along it), and does
// nothing where the readers disagree (one reads the value as it is: the
// others keep their strided reads), for graph outputs and KV caches (their
// layout is the caller's). A layout that moves only axes of size 1 at the
// bound dims (attention's result at decode) is stored too: it costs
// nothing, and the readers' view is then contiguous for every size, which
// codegen can see.
func layout(s *State) (int, error) {
	users := s.Graph.Users()
	owner := map[*ir.Value]*plan.Kernel{}
	for _, k := range s.Plan.Kernels {
		for _, n := range k.Nodes {
			for _, o := range n.Outs {
				owner[o] = k
			}
		}
	}
	changes := 0
	for _, k := range s.Plan.Kernels {
		for _, v := range k.Outputs {
			if plan.InCache(v) {
				continue
			}
			reads := readsOf(v, k, users, owner)
			if !slices.ContainsFunc(reads, read.permutes) {
				continue
			}
			l, err := s.chooseLayout(k, v, reads)
			if err != nil {
				return changes, err
			}
			if l == nil {
				continue
			}
			if s.Plan.Layouts == nil {
				s.Plan.Layouts = map[*ir.Value]plan.Layout{}
			}
			s.Plan.Layouts[v] = l
			changes++
		}
	}
	return changes, nil
}

// read is one way another kernel reads a value from memory: a node of
// kernel by reads the result of views, the chain from the value out.
type read struct {
	by    *plan.Kernel
	views []*ir.Node
}

// permutes reports whether the read goes through a transpose.
func (r read) permutes() bool {
	return slices.ContainsFunc(r.views, func(n *ir.Node) bool { return n.Op == ir.OpTranspose })
}

// readsOf lists the reads of v, kernel k's value, by other kernels.
func readsOf(v *ir.Value, k *plan.Kernel, users map[*ir.Value][]*ir.Node, owner map[*ir.Value]*plan.Kernel) []read {
	var out []read
	var walk func(x *ir.Value, views []*ir.Node)
	walk = func(x *ir.Value, views []*ir.Node) {
		for _, u := range users[x] {
			if plan.IsView(u.Op) {
				for _, o := range u.Outs {
					walk(o, append(views[:len(views):len(views)], u))
				}
				continue
			}
			if by := owner[u.Outs[0]]; by != k {
				out = append(out, read{by: by, views: views})
			}
		}
	}
	walk(v, nil)
	return out
}

// chooseLayout returns the layout kernel k stores v in for its reads, or
// nil where it keeps v's own, and explains the decision.
func (s *State) chooseLayout(k *plan.Kernel, v *ir.Value, reads []read) (plan.Layout, error) {
	subject := fmt.Sprintf("%s of %s", v.Ref(), k.Name)
	strided := "read through a strided view by " + readers(reads, read.permutes)
	want, why := wantedOrder(v, reads)
	if why != "" {
		s.explain(false, "%s: %s; %s", subject, why, strided)
		return nil, nil
	}
	last := len(want) - 1
	switch {
	case isIdentity(want):
		return nil, nil
	case slices.Contains(s.Graph.Outputs, v):
		s.explain(false, "%s: a graph output keeps its declared layout; %s", subject, strided)
		return nil, nil
	case v.Ragged != nil:
		s.explain(false, "%s: a ragged value keeps its declared layout; %s", subject, strided)
		return nil, nil
	case !permutableStores(k.Strategy):
		s.explain(false, "%s: a %s kernel stores its result in its own order; %s", subject, k.Strategy, strided)
		return nil, nil
	case want[last] != last:
		s.explain(false, "%s: the order its readers want (%s) moves its last axis, which its stores keep contiguous; %s", subject, want, strided)
		return nil, nil
	case k.Strategy == plan.Attention && headDim(v) > codegen.PermutedStoreMaxDh:
		s.explain(false, "%s: an attention kernel of head dim %d stores in its own order (its registers are at the limit: the permuted store's addressing spills); %s", subject, headDim(v), strided)
		return nil, nil
	}
	s.explain(true, "%s as %s (%s): read contiguously by %s", subject, want.Stored(v.Type.Shape), want, readers(reads, func(read) bool { return true }))
	return want, nil
}

// headDim is the size of an attention output's last axis, 0 where unknown.
func headDim(v *ir.Value) int64 {
	n, _ := v.Type.Shape[len(v.Type.Shape)-1].Value()
	return n
}

// wantedOrder is the order of v's axes that every read sees row-major, or
// why there is none.
func wantedOrder(v *ir.Value, reads []read) (plan.Layout, string) {
	var want plan.Layout
	for _, r := range reads {
		l, err := readOrder(v, r.views)
		if err != nil {
			return nil, fmt.Sprintf("%s reads it through views that %v", r.by.Name, err)
		}
		if want == nil {
			want = l
		} else if !slices.Equal(want, l) {
			return nil, fmt.Sprintf("its readers want it in different orders (%s: %s, %s: %s)", reads[0].by.Name, want, r.by.Name, l)
		}
	}
	return want, ""
}

// permutableStores reports whether kernels of a strategy address each
// store through the value's layout: row, reduce, copy and attention
// kernels. A GEMM writes its tiles in the result's own order and an append
// writes a cache.
func permutableStores(st plan.Strategy) bool {
	switch st {
	case plan.Row, plan.Reduce, plan.Copy, plan.Attention:
		return true
	}
	return false
}

// readers names the kernels of the reads that keep, without repeats.
func readers(reads []read, keep func(read) bool) string {
	var names []string
	for _, r := range reads {
		if keep(r) && !slices.Contains(names, r.by.Name) {
			names = append(names, r.by.Name)
		}
	}
	return strings.Join(names, ", ")
}

// readOrder is the order in which a read through views sees v's axes: the
// layout that makes the read row-major. It fails where the views are not
// a permutation of whole axes of v: a split or slice (a part of the
// buffer), or a reshape dividing an axis. Axes of constant size 1 a
// reshape drops keep their own place.
func readOrder(v *ir.Value, views []*ir.Node) (plan.Layout, error) {
	shape := v.Type.Shape
	cur := make([][]int, len(shape))
	for i := range cur {
		cur[i] = []int{i}
	}
	for _, d := range views {
		switch d.Op {
		case ir.OpTranspose:
			next := make([][]int, len(d.Attr.Perm))
			for i, p := range d.Attr.Perm {
				next[i] = cur[p]
			}
			cur = next
		case ir.OpReshape:
			var err error
			if cur, err = regroup(cur, shape, d.Outs[0].Type.Shape); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("take a part of it (%s)", d.Op)
		}
	}
	var order plan.Layout
	for _, c := range cur {
		order = append(order, c...)
	}
	for i := range shape {
		if !slices.Contains(order, i) {
			order = slices.Insert(order, min(i, len(order)), i)
		}
	}
	return order, nil
}

// regroup divides v's axes (of sizes shape), in the order cur lists them,
// among the axes of a reshape's result out: each axis of out takes the
// next ones whose sizes multiply to its size; axes of constant size 1 take
// none and are taken by none.
func regroup(cur [][]int, shape, out ir.Shape) ([][]int, error) {
	var queue []int
	for _, c := range cur {
		for _, a := range c {
			if !isOne(shape[a]) {
				queue = append(queue, a)
			}
		}
	}
	next := make([][]int, len(out))
	for j, d := range out {
		if isOne(d) {
			continue
		}
		size := ir.Const(1)
		for !size.Equal(d) {
			if len(queue) == 0 {
				return nil, fmt.Errorf("divide an axis (a reshape to %s)", out)
			}
			size = size.Mul(shape[queue[0]])
			next[j] = append(next[j], queue[0])
			queue = queue[1:]
		}
	}
	if len(queue) > 0 {
		return nil, fmt.Errorf("divide an axis (a reshape to %s)", out)
	}
	return next, nil
}

// isOne reports whether a dim is the constant 1.
func isOne(d ir.Dim) bool {
	n, ok := d.Value()
	return ok && n == 1
}
