// Launch one kernel and print what the runtime says: built for an arch the GPU lacks, the launch
// fails with cudaErrorNoKernelImageForDevice. Build: nvcc -arch=sm_100 -o launch_sm_100 launch.cu
#include <cstdio>

__global__ void fill(int *out) { out[threadIdx.x] = threadIdx.x; }

int main() {
  int *out;
  cudaError_t err = cudaMalloc(&out, 128);
  printf("malloc: %s\n", cudaGetErrorString(err));
  fill<<<1, 32>>>(out);
  err = cudaGetLastError();
  printf("launch: %d %s: %s\n", (int)err, cudaGetErrorName(err), cudaGetErrorString(err));
  err = cudaDeviceSynchronize();
  printf("sync: %s\n", cudaGetErrorString(err));
  return err != cudaSuccess;
}
