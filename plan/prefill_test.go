package plan

import "testing"

// TestPrefillWG checks the wgmma prefill's ring at each head dim it takes
// on the H200 (bytes counted by hand: 1 KiB of alignment slack, the
// 128-row query tile, a K and a V tile a stage), that the deepest ring
// that fits is chosen, and that it refuses head dims that are not whole
// 128-byte lines and targets without wgmma.
func TestPrefillWG(t *testing.T) {
	tests := []struct {
		dh, bc, stages, bytes int64
	}{
		{64, 128, 3, 1024 + 128*64*2 + 3*2*128*64*2},    // 113 KiB
		{128, 128, 3, 1024 + 128*128*2 + 3*2*128*128*2}, // 225 KiB of the 227
		{256, 32, 3, 1024 + 128*256*2 + 3*2*32*256*2},   // 161 KiB
	}
	for _, tt := range tests {
		bc, stages, bytes, ok := PrefillWG(H200, tt.dh)
		if !ok || bc != tt.bc || stages != tt.stages || bytes != tt.bytes {
			t.Errorf("PrefillWG(H200, %d) = %d keys, %d stages, %d bytes, %t; want %d, %d, %d, true", tt.dh, bc, stages, bytes, ok, tt.bc, tt.stages, tt.bytes)
		}
		if bytes > H200.SharedPerBlock || PrefillWGBytes(tt.dh, stages+1) <= H200.SharedPerBlock && stages < 3 {
			t.Errorf("head dim %d: %d stages in %d bytes is not the deepest ring under %d", tt.dh, stages, bytes, H200.SharedPerBlock)
		}
	}
	for _, dh := range []int64{0, 8, 80, 96, 192 + 1, 320} {
		if _, _, _, ok := PrefillWG(H200, dh); ok {
			t.Errorf("PrefillWG(H200, %d) takes the head dim", dh)
		}
	}
	if _, _, _, ok := PrefillWG(A100, 128); ok {
		t.Error("PrefillWG(A100, 128): the A100 has no wgmma")
	}
	small := H200
	small.SharedPerBlock = PrefillWGBytes(128, 2) - 1
	if _, _, _, ok := PrefillWG(small, 128); ok {
		t.Error("PrefillWG takes a target whose block holds less than two stages")
	}
}
