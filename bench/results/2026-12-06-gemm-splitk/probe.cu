#include <cstdio>
#include <cuda_runtime.h>
__global__ void k(float* p) { extern __shared__ float s[]; s[threadIdx.x] = 1; if (p) p[threadIdx.x] = s[threadIdx.x ^ 1]; }
int main() {
  cudaDeviceProp pr; cudaGetDeviceProperties(&pr, 0);
  printf("device %s SMs %d smemPerSM %zu smemOptin %zu L2 %d regsPerSM %d\n", pr.name, pr.multiProcessorCount, pr.sharedMemPerMultiprocessor, pr.sharedMemPerBlockOptin, pr.l2CacheSize, pr.regsPerMultiprocessor);
  cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  int smems[] = {197632, 100000, 50000};
  for (int smem : smems) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (int c = 1; c <= 16; c *= 2) {
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(c * 64); cfg.blockDim = dim3(256); cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute a; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = c; a.val.clusterDim.y = 1; a.val.clusterDim.z = 1;
      cfg.attrs = &a; cfg.numAttrs = 1;
      int n = -1; cudaError_t e = cudaOccupancyMaxActiveClusters(&n, (void*)k, &cfg);
      printf("smem %d cluster %d: max active clusters %d (%s)\n", smem, c, n, cudaGetErrorString(e));
    }
  }
  return 0;
}
