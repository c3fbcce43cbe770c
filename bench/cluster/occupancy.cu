// How many thread block clusters of each size the GPU runs at once when a
// block takes a whole SM (the split-K GEMV's shared-memory ring): the GPCs'
// SM counts decide it, and a split-K GEMV whose splits form one cluster
// must fit its grid in one wave of them. Build and run on the device:
//   nvcc -arch=sm_90a -o /tmp/occ bench/cluster/occupancy.cu && /tmp/occ
#include <cstdio>
#include <cuda_runtime.h>

__global__ void probe(int* out) {
  extern __shared__ int s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    out[blockIdx.x] = (int)sm;
  }
}

int main() {
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (int smem : {170 << 10, 100 << 10}) {
    cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (int size : {1, 2, 4, 8, 16}) {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(size * 64, 1, 1);
      cfg.blockDim = dim3(256, 1, 1);
      cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute a;
      a.id = cudaLaunchAttributeClusterDimension;
      a.val.clusterDim.x = size;
      a.val.clusterDim.y = 1;
      a.val.clusterDim.z = 1;
      cfg.attrs = &a;
      cfg.numAttrs = 1;
      int n = -1;
      cudaError_t e = cudaOccupancyMaxActiveClusters(&n, probe, &cfg);
      printf("shared %3d KiB a block, cluster of %2d: %3d clusters at once (%3d blocks)%s%s\n", smem >> 10, size, n,
             n * size, e ? " error: " : "", e ? cudaGetErrorString(e) : "");
    }
  }
  return 0;
}
