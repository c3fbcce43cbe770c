package interp

import (
	"fmt"
	"testing"

	"github.com/fuser-dev/fuser/ir"
	"github.com/fuser-dev/fuser/specs"
)

func TestSmoke(t *testing.T) {
	for _, name := range specs.Names() {
		fn, src, _ := specs.Source(name)
		g, err := ir.Parse(fn, src)
		if err != nil {
			t.Fatal(err)
		}
		dims := map[string]int64{"B": 2, "S": 3, "T": 5, "L": 2}
		full, der, err := DeriveDims(g, dims)
		fmt.Println(name, der, full, err)
		in, err := RandomInputs(g, dims, 1)
		if err != nil {
			t.Fatal(err)
		}
		if name != "tiny" {
			continue
		}
		res, err := Run(g, full, in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range res.Outputs {
			fmt.Println(k, v)
		}
	}
}
