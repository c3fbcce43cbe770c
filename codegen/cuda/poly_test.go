package cuda

import "testing"

// TestPolyDiv: exact division by a monomial and of a monomial multiple of a
// sum by the sum (a reshape of [B + 8, 4] to [4*B + 32] groups its axes
// by it); anything else is refused.
func TestPolyDiv(t *testing.T) {
	for _, tc := range []struct {
		p, q, want poly
		ok         bool
	}{
		{poly{"B": 6, "": 12}, poly{"": 3}, poly{"B": 2, "": 4}, true},
		{poly{"B*S": 4}, poly{"S": 2}, poly{"B": 2}, true},
		{poly{"B": 4, "": 32}, poly{"B": 1, "": 8}, poly{"": 4}, true},
		{poly{"B*S": 2, "S": 2}, poly{"B": 1, "": 1}, poly{"S": 2}, true},
		{poly{"B": 1, "": 8}, poly{"B": 4, "": 32}, nil, false},
		{poly{"B": 1, "": 3}, poly{"B": 1, "": 1}, nil, false},
		{poly{"B*B": 1, "": -1}, poly{"B": 1, "": 1}, nil, false},
		{poly{"B": 3}, poly{"": 2}, nil, false},
	} {
		got, ok := tc.p.div(tc.q)
		if ok != tc.ok || ok && !got.equal(tc.want) {
			t.Errorf("(%v) / (%v) = %v, %v; want %v, %v", tc.p.c(), tc.q.c(), got, ok, tc.want, tc.ok)
		}
	}
}
