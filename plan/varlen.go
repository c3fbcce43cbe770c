package plan

// VarlenItems is the work items of attention over n packed queries of b
// sequences in query tiles of br rows (VariantVarlenSIMT's grid along x):
// each sequence's queries in tiles of their own, its last one partial, so
// that no tile holds queries of two sequences. Sequence i takes
// ceil(q_i/br) tiles, and the sum of those over any split of n tokens is
// at most ceil(n/br) + b - 1 (each ceiling adds less than one tile); the
// kernel's blocks past the sequences' tiles exit. At least one item.
func VarlenItems(n, b, br int64) int64 {
	if br <= 0 {
		return 1
	}
	return max(1, (n+br-1)/br+b-1)
}

// PackedSplit is the cost model's split of n packed tokens over b
// sequences, whose counts only the indptr knows at run time: as even as
// it goes, the first n mod b sequences a token more.
func PackedSplit(n, b int64) []int64 {
	if b <= 0 {
		return nil
	}
	out := make([]int64, b)
	for i := range out {
		out[i] = n / b
		if int64(i) < n%b {
			out[i]++
		}
	}
	return out
}
