package plan

import (
	"fmt"
	"strings"

	"github.com/fuser-dev/fuser/ir"
)

// String prints the plan kernel by kernel: strategy, whether it runs in the
// load stage, launch, the values read and written, the layouts it stores
// them in where not their own, and the ops computed.
func (p *Plan) String() string {
	var b strings.Builder
	for _, k := range p.Kernels {
		fmt.Fprintf(&b, "%s", k.Name)
		if k.Load {
			fmt.Fprintf(&b, "  (load stage)")
		}
		if k.Launch != nil {
			fmt.Fprintf(&b, "  [%s]", k.Launch)
		}
		fmt.Fprintf(&b, "\n  reads  %s\n  writes %s\n", refs(k.Inputs), refs(k.Outputs))
		for _, o := range k.Outputs {
			if l := p.Layouts[o]; l != nil {
				fmt.Fprintf(&b, "  stores %s as %s (%s)\n", o.Ref(), l.Stored(o.Type.Shape), l)
			}
		}
		for _, n := range k.Nodes {
			fmt.Fprintf(&b, "    %s\n", n)
		}
	}
	if a := p.Arena; a != nil {
		fmt.Fprintf(&b, "arena %d bytes, %d buffers\n", a.Size, len(a.Offsets))
	}
	return b.String()
}

func refs(vs []*ir.Value) string {
	if len(vs) == 0 {
		return "-"
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Ref()
	}
	return strings.Join(out, ", ")
}
