//go:build nvrtc

package cuda

import (
	"crypto/sha256"
	"sync"

	"github.com/fuser-dev/fuser/codegen/nvrtc"
)

// compiled memoizes compileOnce's results over the test binary, by the
// sha256 of arch and source.
var compiled sync.Map

// compiledModule is one source's compilation, made once.
type compiledModule struct {
	once sync.Once
	res  *nvrtc.Result
	err  error
}

// compileOnce is nvrtc.Compile, made once per arch and source in the test
// binary: several tests check the same module (a spec's fused module at
// the S=3 test config: TestNVRTC's report, then the entries the merge,
// split-epilogue and warm tests read), which NVRTC compiled each time,
// and the package's tests ran past their 25-minute limit on two cores.
// The name only labels diagnostics. Callers must not modify the result.
func compileOnce(src, name, arch string) (*nvrtc.Result, error) {
	key := sha256.Sum256([]byte(arch + "\x00" + src))
	v, _ := compiled.LoadOrStore(key, &compiledModule{})
	m := v.(*compiledModule)
	m.once.Do(func() { m.res, m.err = nvrtc.Compile(src, name, arch) })
	return m.res, m.err
}
