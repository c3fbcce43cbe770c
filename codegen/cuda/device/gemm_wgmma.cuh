/*
 * The wgmma GEMM's own device code (codegen/cuda/gemm_wgmma.go), on the
 * wgmma GEMV's stages (gemv_wgmma.cuh) and the tensor copy engine (tma.cuh):
 * its tile order, the launch's shared memory, and the slots of its tensor
 * maps.
 *
 * This comment is not emitted; the rest of the file is, as it stands
 * (codegen/cuda/device.go).
 */
// The wgmma GEMM runs the GEMV's stage loop at plan.GemmWGRows rows
// (m64n128k16) and visits its tiles in groups of FZ_GEMM_WG_GROUP row
// blocks: within a group the row block changes fastest, so that the tiles
// in flight on the GPU at once share a few weight column tiles and row
// blocks in L2 instead of streaming every column tile of the weight for
// each row block.
#define FZ_GEMM_WG_GROUP 16
// fz_gemm_wg_item splits work item it of a unit's nrb row blocks by ntile
// column tiles into its row block and column tile, grouped as above.
FZ_DEV void fz_gemm_wg_item(i64 it, i64 nrb, i64 ntile, i64* rb, i64* t) {
  const i64 per = (i64)FZ_GEMM_WG_GROUP * ntile, g = it / per, j = it % per;
  const i64 first = g * FZ_GEMM_WG_GROUP, rows = nrb - first < FZ_GEMM_WG_GROUP ? nrb - first : FZ_GEMM_WG_GROUP;
  *rb = first + j % rows;
  *t = j / rows;
}
// fz_dyn_smem is the block's dynamic shared memory in bytes, as launched.
FZ_DEV u32 fz_dyn_smem() { u32 n; asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(n)); return n; }
// The GEMM's tensor maps: two a SM (the weight's and the left operand's).
// A launch's block takes the most of an SM's shared memory, so the blocks
// that share an SM's slots run one after the other, and each builds its
// maps before its first copy.
static __device__ __align__(128) u64 fz_gemm_tmaps[2 * FZ_TMA_SLOTS * 16];
// fz_gemm_tslot is map i's slot of the calling thread's SM, or null.
FZ_DEV u64* fz_gemm_tslot(int i) {
  const u32 smid = fz_smid();
  return smid < FZ_TMA_SLOTS ? fz_gemm_tmaps + (2 * smid + i) * 16 : (u64*)0;
}
