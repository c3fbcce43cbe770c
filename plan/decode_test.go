package plan

import "testing"

// TestDecodeRingSoloFits checks that a one-block-an-SM decode ring leaves
// the kernel's static shared memory room under the block's limit, on every
// described target, at the head dims the attention kernels take, and is
// deeper than the shared ring; and that at 8 warps there is no ring where
// two stages do not fit.
func TestDecodeRingSoloFits(t *testing.T) {
	for _, tg := range []Target{H200, H100, A100} {
		for _, dh := range []int64{64, 96, 128, 160, 192, 256} {
			stages, bytes := DecodeRingSolo(tg, dh, 128)
			if limit := min(tg.SharedPerSM-blockReserved, tg.SharedPerBlock); bytes+decodeStatic > limit {
				t.Errorf("%s dh %d: %d bytes of ring + %d static > %d", tg.Name, dh, bytes, decodeStatic, limit)
			}
			if stages == 0 {
				continue
			}
			if st := DecodeStages(dh, 128, bytes); st != stages {
				t.Errorf("%s dh %d: DecodeStages(%d bytes) = %d, want %d", tg.Name, dh, bytes, st, stages)
			}
			if shared, _ := DecodeRing(dh, 128); stages < shared {
				t.Errorf("%s dh %d: solo ring of %d stages, shared one %d", tg.Name, dh, stages, shared)
			}
		}
	}
	// 8 warps: 3 stages at dh 128 in the same bytes; none past the SM.
	if stages, bytes := DecodeRingSolo(H200, 128, 256); stages != 3 || bytes != 213248 {
		t.Errorf("dh 128, 8 warps: %d stages, %d bytes; want 3, 213248", stages, bytes)
	}
	if stages, bytes := DecodeRingSolo(H200, 256, 256); stages != 0 || bytes != 0 {
		t.Errorf("dh 256, 8 warps: %d stages, %d bytes; want none (two stages exceed the SM)", stages, bytes)
	}
	if stages, bytes := DecodeRingSolo(H200, 128, 128); stages != 6 || bytes != 213248 {
		t.Errorf("dh 128: %d stages, %d bytes; want 6, 213248 (the measured launch)", stages, bytes)
	}
}

// TestDecodeBlocksPerSM checks the decode blocks an SM holds: two on the
// H200 (registers), one on the A100 (shared memory: two 110 KiB rings
// exceed 164 KiB).
func TestDecodeBlocksPerSM(t *testing.T) {
	for _, tt := range []struct {
		tg   Target
		want int64
	}{{H200, 2}, {A100, 1}} {
		if got := DecodeBlocksPerSM(tt.tg, 128, 128); got != tt.want {
			t.Errorf("%s: %d blocks an SM, want %d", tt.tg.Name, got, tt.want)
		}
	}
}
