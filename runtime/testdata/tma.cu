// The tensor-map kernel of the runtime's GPU test; testdata/tma.ptx is this
// file compiled by NVRTC for compute_90 (kernels_test.go keeps the two in
// step).
struct __align__(64) tmap {
	unsigned long long w[16];
};

// rows copies rows r .. r + 15 of a map of rows of 128 16-bit elements
// (runtime.RowMap, dh 128: two 128-byte lines a row, landing in the
// 128-byte swizzle) by the tensor copy engine into shared memory, then
// writes them to out unswizzled, 16 rows of 128.
extern "C" __global__ void rows(const __grid_constant__ tmap m, int r, unsigned short* out) {
	__shared__ __align__(1024) unsigned short tile[16 * 128];
	__shared__ __align__(8) unsigned long long bar;
	const unsigned b = (unsigned)__cvta_generic_to_shared(&bar), d = (unsigned)__cvta_generic_to_shared(tile);
	if (threadIdx.x == 0) asm volatile("mbarrier.init.shared.b64 [%0], 1;\n\tfence.mbarrier_init.release.cluster;" :: "r"(b) : "memory");
	__syncthreads();
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(16 * 128 * 2) : "memory");
		asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %2}], [%4];"
		             :: "r"(d), "l"(&m), "r"(0), "r"(r), "r"(b) : "memory");
	}
	asm volatile("{\n\t.reg .pred p;\n\tW: mbarrier.try_wait.parity.shared.b64 p, [%0], 0;\n\t@!p bra W;\n\t}" :: "r"(b) : "memory");
	for (int e = threadIdx.x; e < 16 * 128; e += blockDim.x) {
		const int i = e / 128, ch = e % 128 / 8;
		const int off = (ch >> 3) * 2048 + i * 128 + (((ch & 7) ^ (i & 7)) << 4) + e % 8 * 2;
		out[e] = *(const unsigned short*)((const char*)tile + off);
	}
}
