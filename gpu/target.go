//go:build cuda

package gpu

import (
	"fmt"

	"github.com/fuser-dev/fuser/plan"
	"github.com/fuser-dev/fuser/runtime"
)

// DeviceTarget is the target the bench plans for on the device described
// by info: the described target of its architecture (compute capability
// 9.x sm_90a, 8.x sm_80), with the SMs, shared memory, registers and L2 the
// device reports (and the described cluster slots only where its SM count
// is the described one's). The kernel images are built for Arch: a device of
// another architecture is an error.
func DeviceTarget(info runtime.DeviceInfo) (plan.Target, error) {
	arch := fmt.Sprintf("sm_%d%d", info.ComputeCapMajor, info.ComputeCapMinor)
	if info.ComputeCapMajor == 9 {
		arch += "a"
	}
	if arch != Arch {
		return plan.Target{}, fmt.Errorf("device %s is %s: the kernel images are built for %s", info.Name, arch, Arch)
	}
	t, err := plan.LookupTarget(arch)
	if err != nil {
		return plan.Target{}, fmt.Errorf("device %s: %w", info.Name, err)
	}
	t.Name = info.Name
	if t.SMs != int64(info.SMs) {
		// The described cluster slots are the described SM count's.
		t.ClusterSlots = [9]int64{}
	}
	t.SMs = int64(info.SMs)
	t.SharedPerSM, t.SharedPerBlock = int64(info.SharedPerSM), int64(info.SharedPerBlock)
	t.RegistersPerSM = int64(info.RegistersPerSM)
	t.L2Bytes = info.L2Bytes
	return t, t.Verify()
}

// Target is the target of the device d runs on (DeviceTarget).
func (d *Device) Target() (plan.Target, error) {
	info, err := d.Ctx.Info()
	if err != nil {
		return plan.Target{}, err
	}
	return DeviceTarget(info)
}
