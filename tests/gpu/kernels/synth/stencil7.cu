/*
 * 3-D 7-point stencil on X x Y x Z, one thread per (x, y) column sweeping z over the interior.
 * The kernel trace/synth_stencil.c describes for `gpuprobe trace synth --pattern stencil7`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid (ceil(X/BX), ceil(Y/BY)), block (BX, BY).
 */
extern "C" __global__ void stencil7(const float *in, float *out, size_t X, size_t Y, size_t Z)
{
    size_t x = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t y = (size_t)blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x + 1 >= X || y + 1 >= Y)
        return;
    size_t plane = X * Y;
#pragma unroll 1
    for (size_t z = 1; z + 1 < Z; z++) {
        size_t i = z * plane + y * X + x;
        /* insns 0-6: the centre, x-1, x+1, y-1, y+1, z-1, z+1 (only the last with flag 1);
         * insn 7: the store */
        out[i] = 0.4f * in[i] + 0.1f * (in[i - 1] + in[i + 1] + in[i - X] + in[i + X] +
                                        in[i - plane] + in[i + plane]);
    }
}
