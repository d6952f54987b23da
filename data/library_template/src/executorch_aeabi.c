// SPDX-License-Identifier: BSD-3-Clause
// Part of the ExecuTorch Arduino library generator.
//
// Compiler-runtime helpers (ARM RTABI) that ExecuTorch's kernels call and the UNO Q's
// firmware does not export. In the board's Dynamic link mode the sketch is a Zephyr LLEXT
// extension linked `-r` with no -lgcc: every helper it calls and does not define must be
// in the firmware's export table (arduino/ArduinoCore-zephyr loader/llext_exports.c,
// tags 0.51.0 to 0.55.1), or the loader refuses the sketch ("Undefined symbol", "Failed to
// link, ret -61"). That table has no float-to-64-bit-integer conversion but __aeabi_d2lz.
//
// What the library's objects call that the table lacks, found by compiling every source of
// a library built with --all-ops for the board (-mcpu=cortex-m33 -mthumb -mfloat-abi=hard
// -mfpu=fpv5-sp-d16 -Os -ffunction-sections -fdata-sections -mlong-calls) and listing
// `arm-none-eabi-nm -u`:
//
// - __aeabi_f2lz (float -> int64_t), from the portable kernels' float, Half and BFloat16
//   to Long conversions: dtype_util.h's load_and_convert / convert_and_store (the
//   elementwise ops), cat's and stack's copies, _to_dim_order_copy_impl. The default op set:
//   op_add, op_sub, op_mul, op_div, op_cat, op__to_dim_order_copy. With --all-ops also
//   op_addmm, op_clamp, op_convolution, op_copy, op_cumsum, op_eq/ne/lt/le/gt/ge, op_fill,
//   op_floor_divide, op_fmod, op_masked_fill, op_max, op_min, cpu_op_maximum,
//   cpu_op_minimum, op_neg, op_pow, op_prod, op_remainder, op_rsub, op_sum, op_to_copy,
//   op_where, the five op_bitwise_* ops, op_select_scatter, op_slice_scatter,
//   op_split_copy, op_split_with_sizes_copy, op_unbind_copy, op_unfold_copy,
//   op__adaptive_avg_pool2d, op_grid_sampler_2d, the three op_upsample_* ops,
//   pattern/unary_ufunc_realhbf16 and util/stack_util (51 sources; the same at -O2, and
//   at -O0 op_atan2, op_elu, op_glu, op_native_dropout and op_sigmoid too).
//
// Nothing else: no __aeabi_ll*, __aeabi_f2ulz, __aeabi_d2ulz, __*di* or bit-count helper
// (GCC inlines the M33's 64-bit shifts, multiplies and compares). __aeabi_f2ulz
// (float -> uint64_t) and __aeabi_d2ulz (double -> uint64_t), the rest of the family the
// table lacks, are defined too: no ExecuTorch source calls them today, a sketch's own
// `(uint64_t)x` does, and each is a section of its own that the link drops when nothing
// calls it.
//
// Results: libgcc's for this CPU (arm-none-eabi GCC 12.2, multilib thumb/v8-m.main+fp/hard),
// whose __aeabi_f2lz, __aeabi_f2ulz and __aeabi_d2ulz are libgcc2.c's __fixsfdi,
// __fixunssfdi and __fixunsdfdi, not soft-fp's (their objects call __aeabi_f2d,
// __aeabi_dmul, __aeabi_d2uiz, __aeabi_ui2d and __aeabi_dsub), the algorithm of libgcc's
// __aeabi_d2lz too:
// - in range: truncation toward zero, as C's cast;
// - unsigned: NaN, negative values and -inf give 0; 2^64 and above and +inf give
//   UINT64_MAX (saturation);
// - signed: NaN gives 0; otherwise the unsigned conversion of |x| (saturated as above),
//   negated when x < 0, then taken modulo 2^64: [2^63, 2^64) wraps to negative values,
//   2^64 and above and +inf give -1, (-2^64, -2^63) wraps to positive values, -2^64 and
//   below and -inf give 1. So (int64_t)f equals libgcc's (int64_t)(double)f for every
//   float f. Out-of-range conversions are undefined behaviour in C; no kernel relies on
//   them, and the host's cast differs (x86 gives INT64_MIN).
//
// Only integer operations on the IEEE-754 bit pattern: no float arithmetic or comparison
// that the compiler could turn back into a helper call (tests/unit/check/test_aeabi_helpers.py checks
// that the object references nothing, and compares the results with libgcc's on the
// emulated Cortex-M33 and with C's cast on the host).
//
// Each helper is weak: the core's cores/arduino/llext_wrappers.c (0.55.1 on) defines every
// __aeabi_* function the firmware exports in the sketch's core.a, so once a firmware
// exports one of these, its wrapper overrides ours instead of clashing with it; so does
// libgcc's member when a link pulls it for its other name (__fixsfdi, ...). In the Static
// link mode the firmware's PROVIDEd symbols never replace a definition, weak or not, so
// ours is used there as well.
//
// RTABI helpers take and return their values in core registers (the base procedure call
// standard) even under -mfloat-abi=hard: pcs("aapcs").

#if defined(__arm__) || defined(EXECUTORCH_AEABI_HOST_TEST)

#include <stdint.h>

// Truncation of a non-negative value sig * 2^exp2 (sig < 2^53), UINT64_MAX when it is
// 2^64 or more.
static uint64_t executorch_scaled_magnitude(uint64_t sig, int exp2, int sig_bits) {
  if (exp2 + sig_bits > 64) return UINT64_MAX;  // sig has its top bit set: >= 2^64
  if (exp2 >= 0) return sig << exp2;
  if (exp2 <= -sig_bits) return 0;  // below 1
  return sig >> -exp2;
}

// float bits -> the truncated magnitude, saturated at UINT64_MAX (inf too); NaN: 0.
static uint64_t executorch_f2u_magnitude(uint32_t bits) {
  uint32_t exponent = (bits >> 23) & 0xFFu;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent == 0xFFu) return mantissa != 0 ? 0 : UINT64_MAX;
  if (exponent == 0) return 0;  // zero or subnormal: below 1
  return executorch_scaled_magnitude(mantissa | 0x800000u, (int)exponent - 150, 24);
}

// double bits -> the truncated magnitude, saturated at UINT64_MAX (inf too); NaN: 0.
static uint64_t executorch_d2u_magnitude(uint64_t bits) {
  uint32_t exponent = (uint32_t)(bits >> 52) & 0x7FFu;
  uint64_t mantissa = bits & 0xFFFFFFFFFFFFFull;
  if (exponent == 0x7FFu) return mantissa != 0 ? 0 : UINT64_MAX;
  if (exponent == 0) return 0;
  return executorch_scaled_magnitude(mantissa | (1ull << 52), (int)exponent - 1075, 53);
}

static uint64_t executorch_f2ulz_bits(uint32_t bits) {
  return (bits >> 31) != 0 ? 0 : executorch_f2u_magnitude(bits);
}

static int64_t executorch_f2lz_bits(uint32_t bits) {
  uint64_t magnitude = executorch_f2u_magnitude(bits);
  // Modulo 2^64, as libgcc's negation of an unsigned value (GCC converts modulo too).
  return (int64_t)((bits >> 31) != 0 ? 0 - magnitude : magnitude);
}

static uint64_t executorch_d2ulz_bits(uint64_t bits) {
  return (bits >> 63) != 0 ? 0 : executorch_d2u_magnitude(bits);
}

#endif

#if defined(__arm__)

#define EXECUTORCH_RTABI __attribute__((weak, pcs("aapcs")))

EXECUTORCH_RTABI long long __aeabi_f2lz(float x);
EXECUTORCH_RTABI unsigned long long __aeabi_f2ulz(float x);
EXECUTORCH_RTABI unsigned long long __aeabi_d2ulz(double x);

// The unions read the argument's bits where the base standard passes them (r0, r0-r1).
EXECUTORCH_RTABI long long __aeabi_f2lz(float x) {
  union {
    float f;
    uint32_t u;
  } v = {x};
  return executorch_f2lz_bits(v.u);
}

EXECUTORCH_RTABI unsigned long long __aeabi_f2ulz(float x) {
  union {
    float f;
    uint32_t u;
  } v = {x};
  return executorch_f2ulz_bits(v.u);
}

EXECUTORCH_RTABI unsigned long long __aeabi_d2ulz(double x) {
  union {
    double d;
    uint64_t u;
  } v = {x};
  return executorch_d2ulz_bits(v.u);
}

#endif
