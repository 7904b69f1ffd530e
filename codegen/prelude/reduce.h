// kjit prelude: sums over a launch's threads of the adjoints of value parameters (kjit/abi.h,
// value_t). On CUDA a block reduces its threads' sums (warp shuffles, then one slot per warp)
// and adds the total with one atomic; on the cpu an entry adds its threads' sums in order, one
// partial per block of threads.
//@chunk reduce requires atomic array
namespace kj {
#if KJ_CUDA
/// `v` of the lane `offset` above, for any trivially copyable T: its bytes travel as 32-bit
/// words; only adding needs to know the type.
template <class T> KJ_FUNC T shfl_down_any(const T& v, unsigned int offset, unsigned int mask) {
  constexpr int kWords = int((sizeof(T) + 3) / 4);
  unsigned int in[kWords] = {}, out[kWords];
  const unsigned char* src = (const unsigned char*)&v;
  for (int b = 0; b < int(sizeof(T)); ++b) ((unsigned char*)in)[b] = src[b];
  for (int w = 0; w < kWords; ++w) out[w] = __shfl_down_sync(mask, in[w], offset);
  T r = v;
  unsigned char* dst = (unsigned char*)&r;
  for (int b = 0; b < int(sizeof(T)); ++b) dst[b] = ((const unsigned char*)out)[b];
  return r;
}
/// The sum of `v` over the lanes of this warp that exist, in lane 0 (a block's last warp may
/// be partial when blockDim.x is not a multiple of 32).
template <class S> KJ_FUNC S warp_sum(S v, unsigned int lanes) {
  const unsigned int mask = lanes >= 32u ? 0xffffffffu : (1u << lanes) - 1u;
  const unsigned int lane = threadIdx.x & 31u;
  for (unsigned int offset = 16; offset > 0; offset >>= 1) {
    S other = shfl_down_any(v, offset, mask);
    if (lane + offset < lanes) v += other;
  }
  return v;
}
/// *dst += v atomically, v converted to the destination's type when it is a wider sum.
template <class T> KJ_FUNC void add_sum(T* dst, const T& v) { atomic_add(dst, v); }
template <class T, class S> KJ_FUNC void add_sum(T* dst, const S& v) { atomic_add(dst, cast<T>(v)); }
/// Adds the sum over this block's threads of `v` to *dst: one atomic add per block. Every
/// thread of the block must call it (it synchronises the block twice). S is the sum's type,
/// T the destination's (float16 and bfloat16 sums are float32 until the add).
template <class T, class S> KJ_FUNC_BIG void block_add(T* dst, S v) {
  // One slot per warp; raw storage, as __shared__ variables cannot have constructors.
  __shared__ unsigned long long kj_warp_sums[(32 * sizeof(S) + 7) / 8];
  S* sums = (S*)kj_warp_sums;
  const unsigned int warp = threadIdx.x >> 5, warps = (blockDim.x + 31u) >> 5;
  const unsigned int in_warp = warp + 1u < warps ? 32u : blockDim.x - warp * 32u;
  v = warp_sum(v, in_warp);
  if ((threadIdx.x & 31u) == 0) sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    S w = (threadIdx.x < warps) ? sums[threadIdx.x] : S{};
    w = warp_sum(w, blockDim.x < 32u ? blockDim.x : 32u);
    if (threadIdx.x == 0) add_sum(dst, w);
  }
  __syncthreads();  // the slots are free for the next parameter's sum
}
#endif
}  // namespace kj
