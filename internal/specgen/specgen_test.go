package specgen

import (
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/fuser-dev/fuser/interp"
)

// seeds is how many seeds TestSeedCorpus checks: by default 400, about a
// second of CPU; `go test ./internal/specgen -run SeedCorpus -seeds 100000`
// sweeps more.
var seeds = flag.Uint64("seeds", 400, "how many generated specs TestSeedCorpus checks")

// TestSeedCorpus checks the specs of the first seeds (see Check).
func TestSeedCorpus(t *testing.T) {
	for seed := range *seeds {
		s := Generate(seed)
		if err := Check(s); err != nil {
			t.Errorf("seed %d: %v\n%s", seed, err, s.Source)
		}
	}
}

// TestRegressions checks the specs of testdata: each reproduces a bug the
// generator found.
func TestRegressions(t *testing.T) {
	specs, err := ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) == 0 {
		t.Fatal("no spec in testdata")
	}
	for _, s := range specs {
		if err := Check(s); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}

// FuzzSpec generates a spec from the fuzzed bytes, choice by choice (see
// Bytes), and checks it. `make fuzz` runs it for minutes.
func FuzzSpec(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 16 {
		b := make([]byte, 64)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s := New("fuzz", NewBytes(b))
		if err := Check(s); err != nil {
			t.Fatalf("%v\n%s", err, s.Source)
		}
	})
}

// TestGenerateDeterministic: a seed always gives the same spec, and the
// file form reads back to it.
func TestGenerateDeterministic(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, 7, 3); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		want := Generate(uint64(7 + i))
		if !reflect.DeepEqual(s, want) {
			t.Errorf("file %d reads back as %+v, want %+v", i, s, want)
		}
	}
	if len(got) != 3 {
		t.Fatalf("%d specs written, want 3", len(got))
	}
}

// TestSameFails feeds the comparison each difference it must report.
func TestSameFails(t *testing.T) {
	want := []float64{1, -2, 0.5, math.NaN(), math.Inf(1)}
	for _, c := range []struct {
		name string
		i    int
		v    float64
	}{
		{"relative 1e-11", 1, -2 * (1 + 1e-11)},
		{"NaN for a finite value", 0, math.NaN()},
		{"Inf for a finite value", 2, math.Inf(-1)},
		{"finite for NaN", 3, 0},
		{"Inf of the other sign", 4, math.Inf(-1)},
	} {
		got := append([]float64(nil), want...)
		got[c.i] = c.v
		if err := same(&interp.Tensor{Shape: []int{5}, Data: got}, &interp.Tensor{Shape: []int{5}, Data: want}); err == nil {
			t.Errorf("%s: no difference reported", c.name)
		}
	}
	close := append([]float64(nil), want...)
	close[1] = -2 * (1 + 1e-13)
	if err := same(&interp.Tensor{Shape: []int{5}, Data: close}, &interp.Tensor{Shape: []int{5}, Data: want}); err != nil {
		t.Errorf("a difference of 1e-13 and matching NaN and Inf: %v", err)
	}
}

// TestCheckReportsStage: a spec the checker rejects is a check failure.
func TestCheckReportsStage(t *testing.T) {
	err := Check(Spec{Name: "bad", Source: "layer bad\ninput x : f32[4]\noutput y : f32[5]\ny = x\n"})
	var f *Failure
	if !errors.As(err, &f) || f.Stage != "check" {
		t.Fatalf("got %v, want a check failure", err)
	}
}
