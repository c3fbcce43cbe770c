package plan

import "testing"

// TestDecodeRingSoloFits checks that a one-block-an-SM decode ring leaves
// the kernel's static shared memory room under the block's limit, at the
// head dims the attention kernels take, and is deeper than the shared
// ring; and that at 8 warps there is no ring where two stages do not fit.
func TestDecodeRingSoloFits(t *testing.T) {
	for _, dh := range []int64{64, 96, 128, 160, 192, 256} {
		stages, bytes := DecodeRingSolo(dh, 128)
		if limit := int64(smPerSMShared - blockReserved); bytes+decodeStatic > limit {
			t.Errorf("dh %d: %d bytes of ring + %d static > %d", dh, bytes, decodeStatic, limit)
		}
		if st := DecodeStages(dh, 128, bytes); st != stages {
			t.Errorf("dh %d: DecodeStages(%d bytes) = %d, want %d", dh, bytes, st, stages)
		}
		if shared, _ := DecodeRing(dh, 128); stages < shared {
			t.Errorf("dh %d: solo ring of %d stages, shared one %d", dh, stages, shared)
		}
	}
	// 8 warps: 3 stages at dh 128 in the same bytes; none past the SM.
	if stages, bytes := DecodeRingSolo(128, 256); stages != 3 || bytes != 213248 {
		t.Errorf("dh 128, 8 warps: %d stages, %d bytes; want 3, 213248", stages, bytes)
	}
	if stages, bytes := DecodeRingSolo(256, 256); stages != 0 || bytes != 0 {
		t.Errorf("dh 256, 8 warps: %d stages, %d bytes; want none (two stages exceed the SM)", stages, bytes)
	}
	if stages, bytes := DecodeRingSolo(128, 128); stages != 6 || bytes != 213248 {
		t.Errorf("dh 128: %d stages, %d bytes; want 6, 213248 (the measured launch)", stages, bytes)
	}
}
