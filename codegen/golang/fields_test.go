package golang

import (
	"strings"
	"testing"

	"github.com/fuser-dev/fuser/frontend"
)

// TestLayerNames checks the names and sizes LayerNames gives paged_decode
// against the package Generate writes: every buffer has its accessor,
// every input its field of StepInputs in the element type named.
func TestLayerNames(t *testing.T) {
	p, dims := planSpec(t, "paged_decode", false)
	ns, err := LayerNames(p.Graph, dims)
	if err != nil {
		t.Fatal(err)
	}
	src, err := Generate(p, dims, nil, "paged_decode", "kernels.ptx")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range ns.Buffers {
		got = append(got, f.Role+" "+f.Value.Name+" "+f.Name)
		if want := "func (l *Layer) " + f.Name + "() runtime.Buffer"; !strings.Contains(src, want) {
			t.Errorf("generated code lacks %q", want)
		}
		if f.Role == "input" && !strings.Contains(src, "\t"+f.Name+" []"+f.Elem+"\n") {
			t.Errorf("StepInputs lacks %s []%s", f.Name, f.Elem)
		}
	}
	want := "input x X,input pos Pos,input kv_indptr KvIndptr,input kv_pages KvPages,input kv_last KvLast," +
		"param wn1 Wn1,param wqkv Wqkv,param wo Wo,param wn2 Wn2,param wgu Wgu,param wd Wd,state kv Kv,output y Y"
	if s := strings.Join(got, ","); s != want {
		t.Errorf("buffers %s,\nwant %s", s, want)
	}
	// x bf16[B=2, S=3, D=2048]; kv as its pool of P=64 pages [2, 8, 16, 64]
	// bf16, without the scratch page.
	for i, want := range map[int]struct {
		bytes int64
		elem  string
	}{0: {2 * 3 * 2048 * 2, "uint16"}, 1: {2 * 3 * 4, "int32"}, 11: {64 * 2 * 8 * 16 * 64 * 2, "uint16"}} {
		if f := ns.Buffers[i]; f.Bytes != want.bytes || f.Elem != want.elem {
			t.Errorf("%s: %d bytes of %s, want %d of %s", f.Value.Name, f.Bytes, f.Elem, want.bytes, want.elem)
		}
	}
	if ns.Dims["B"] != "B" || ns.Dims["N"] != "N" || len(ns.Dims) != 5 {
		t.Errorf("dims %v", ns.Dims)
	}
}

// TestLayerNamesReserved checks that a value named as a method of the
// package gets another name, as Generate gives it, and that an unbound dim
// is an error.
func TestLayerNamesReserved(t *testing.T) {
	g, err := frontend.Parse("r.fu", "layer r\ndim B\ninput step : f32[B, 4]\noutput arena : f32[B, 4]\narena = step * 2\n")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := LayerNames(g, map[string]int64{"B": 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range ns.Buffers {
		if want := []string{"Step", "Arena"}[i]; !strings.HasPrefix(f.Name, want) || f.Name == want || f.Elem != "float32" || f.Bytes != 48 {
			t.Errorf("%s: named %s (%s, %d bytes), want %s and a suffix, float32, 48 bytes", f.Value.Name, f.Name, f.Elem, f.Bytes, want)
		}
	}
	if _, err := LayerNames(g, nil); err == nil || !strings.Contains(err.Error(), "step") {
		t.Errorf("LayerNames without dims: %v, want an error naming input step", err)
	}
}
