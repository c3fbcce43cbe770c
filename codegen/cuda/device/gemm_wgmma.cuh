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
// A launch that splits K over the blocks of a cluster (plan.GemmWGSplits)
// reads its place in the cluster and meets the cluster's other blocks at
// its barriers: arrive releases this thread's shared-memory writes and
// reads, wait acquires every arrived thread's.
FZ_DEV u32 fz_cluster_rank() { u32 r; asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
FZ_DEV u32 fz_cluster_blocks() { u32 n; asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n)); return n; }
FZ_DEV void fz_cluster_arrive() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
FZ_DEV void fz_cluster_wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }
// A split launch walks work indices (emitGemmWGSplitLoop): block x takes
// x, x + blocks, ...; fz_gemm_wg_full is how many items run unsplit, a
// block each, before the rest split over clusters of s blocks (all of
// them in a launch whose clusters are not of s blocks; none where every
// item splits; where only the last round splits (tail), the whole rounds
// of blocks, if the items left are no more than the clusters, else all),
// and fz_gemm_wg_work is index wi's item and its split count. Their Go
// twins are plan.GemmWGFull and plan.GemmWGWork.
FZ_DEV i64 fz_gemm_wg_full(i64 nit, i64 blocks, int s, bool tail) {
  if (fz_cluster_blocks() != (u32)s) return nit;
  if (!tail) return 0;
  const i64 last = nit / blocks * blocks;
  return (nit - last) * s > blocks ? nit : last;
}
FZ_DEV i64 fz_gemm_wg_work(i64 wi, i64 full, int s, int* S) {
  *S = wi < full ? 1 : s;
  return wi < full ? wi : full + (wi - full) / s;
}
// fz_gemm_wg_reduce makes rows [m0, m1) of this block's tile sums res
// (stride floats a row, SLOTS slots) the sums over the cluster's first
// splits blocks' res, added in rank order (the same bits whichever block
// adds them); 16 bytes a thread at a time, through distributed shared
// memory. The cluster's sums must be complete (a cluster barrier), and no
// other block may read these rows.
template <int SLOTS>
FZ_DEV void fz_gemm_wg_reduce(float* res, int stride, int splits, int m0, int m1) {
  const u32 base = fz_smem_addr(res);
  for (int e = threadIdx.x; e < (m1 - m0) * (SLOTS / 4); e += blockDim.x) {
    const int m = m0 + e / (SLOTS / 4), c = (e % (SLOTS / 4)) * 4;
    const u32 off = base + 4u * (u32)(m * stride + c);
    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
    for (int q = 0; q < splits; q++) {
      u32 ra;
      float v0, v1, v2, v3;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(off), "r"(q));
      asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v0), "=f"(v1), "=f"(v2), "=f"(v3) : "r"(ra) : "memory");
      s0 += v0; s1 += v1; s2 += v2; s3 += v3;
    }
    *(float4*)(res + m * stride + c) = float4{s0, s1, s2, s3};
  }
}
