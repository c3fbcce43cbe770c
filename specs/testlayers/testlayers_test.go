package testlayers

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/internal/golden"
	"github.com/fuser-dev/fuser/specs"
)

// TestSmall: every embedded spec shrinks to the graph in
// testdata/small/<spec>.ir, its constants listed first; the interpreter's
// tests and the on-device suite run these graphs, so a change here changes
// what they check.
func TestSmall(t *testing.T) {
	for _, name := range specs.Names() {
		t.Run(name, func(t *testing.T) {
			g, err := Small(name)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			var consts []string
			for k := range g.Consts {
				consts = append(consts, k)
			}
			sort.Strings(consts)
			for _, k := range consts {
				fmt.Fprintf(&b, "const %s = %g\n", k, g.Consts[k])
			}
			b.WriteString(g.String())
			golden.Check(t, "testdata/small/"+name+".ir", b.String())
		})
	}
}
