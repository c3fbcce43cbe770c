package plan

import "testing"

// TestDecodeRingSoloFits checks that a one-block-an-SM decode ring leaves
// the kernel's static shared memory room under the block's limit, at the
// head dims the attention kernels take, and is deeper than the shared
// ring.
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
	if stages, bytes := DecodeRingSolo(128, 128); stages != 6 || bytes != 213248 {
		t.Errorf("dh 128: %d stages, %d bytes; want 6, 213248 (the measured launch)", stages, bytes)
	}
}
