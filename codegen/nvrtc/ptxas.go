package nvrtc

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// KernelInfo is ptxas's report on one entry function.
type KernelInfo struct {
	// Name is the entry function's (mangled, unless extern "C") name.
	Name string `json:"name"`
	// Arch is the architecture it was compiled for, such as sm_90a.
	Arch string `json:"arch"`
	// Registers is the number of registers per thread.
	Registers int `json:"registers"`
	// SharedBytes is the static shared memory per block (dynamic shared
	// memory is set at launch and not counted).
	SharedBytes int64 `json:"shared_bytes"`
	// StackBytes is the per-thread stack frame.
	StackBytes int64 `json:"stack_bytes"`
	// SpillStores and SpillLoads are bytes of register spills per thread.
	SpillStores int64 `json:"spill_stores"`
	SpillLoads  int64 `json:"spill_loads"`
	// Serialized is set where ptxas serialized the entry's wgmma
	// instructions (its C7513 advisory): an instruction other than a
	// wgmma defines a register that a wgmma in flight reads or writes, so
	// every wgmma waits for the one before it.
	Serialized bool `json:"serialized,omitempty"`
}

// Spills reports whether ptxas spilled registers to local memory.
func (k KernelInfo) Spills() bool { return k.SpillStores > 0 || k.SpillLoads > 0 }

// String prints the report on one line.
func (k KernelInfo) String() string {
	return fmt.Sprintf("%s (%s): %d registers, %d bytes smem, %d bytes stack, %d/%d bytes spill stores/loads",
		k.Name, k.Arch, k.Registers, k.SharedBytes, k.StackBytes, k.SpillStores, k.SpillLoads)
}

var (
	entryRe = regexp.MustCompile(`Compiling entry function '([^']+)' for '([^']+)'`)
	propsRe = regexp.MustCompile(`Function properties for (\S+)`)
	frameRe = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	usedRe  = regexp.MustCompile(`Used (\d+) registers`)
	smemRe  = regexp.MustCompile(`(\d+) bytes smem`)
	serRe   = regexp.MustCompile(`wgmma\.mma_async instructions are serialized .* in the function '([^']+)'`)
)

// ParsePtxasInfo reads the per-kernel report out of a log of ptxas run with
// --verbose. It reports, for each "Compiling entry function" line, the
// registers and shared memory of the "Used" line that follows and the stack
// and spill bytes of the entry's "Function properties" block (the properties
// of non-inlined device functions are not attributed to their callers).
// An entry named by a wgmma serialization advisory is Serialized. Lines it
// does not know are skipped; a known line whose numbers do not parse is an
// error.
func ParsePtxasInfo(log string) ([]KernelInfo, error) {
	var (
		out   []KernelInfo
		cur   = -1 // index in out of the entry being compiled
		props string
		ser   = map[string]bool{}
	)
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if m := serRe.FindStringSubmatch(text); m != nil {
			ser[m[1]] = true
			continue
		}
		if m := entryRe.FindStringSubmatch(text); m != nil {
			out = append(out, KernelInfo{Name: m[1], Arch: m[2]})
			cur, props = len(out)-1, ""
			continue
		}
		if m := propsRe.FindStringSubmatch(text); m != nil {
			props = m[1]
			continue
		}
		if m := frameRe.FindStringSubmatch(text); m != nil {
			n, err := atoi64s(m[1:])
			if err != nil {
				return nil, fmt.Errorf("ptxas log line %d: %w", line, err)
			}
			if cur >= 0 && props == out[cur].Name {
				out[cur].StackBytes, out[cur].SpillStores, out[cur].SpillLoads = n[0], n[1], n[2]
			}
			props = ""
			continue
		}
		if m := usedRe.FindStringSubmatch(text); m != nil && cur >= 0 {
			regs, err := strconv.Atoi(m[1])
			if err != nil {
				return nil, fmt.Errorf("ptxas log line %d: %w", line, err)
			}
			out[cur].Registers = regs
			if s := smemRe.FindStringSubmatch(text); s != nil {
				if out[cur].SharedBytes, err = strconv.ParseInt(s[1], 10, 64); err != nil {
					return nil, fmt.Errorf("ptxas log line %d: %w", line, err)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ptxas log: %w", err)
	}
	for i := range out {
		out[i].Serialized = ser[out[i].Name]
	}
	return out, nil
}

func atoi64s(ss []string) ([]int64, error) {
	out := make([]int64, len(ss))
	for i, s := range ss {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}
