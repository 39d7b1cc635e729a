/*
 * simd.c - which of the streaming kernel's loop sets this CPU runs: asked
 * of the CPU at run time (GCC's __builtin_cpu_supports, which also checks
 * that the OS saves the wide registers), so that one portable binary,
 * built without -march, uses AVX-512 or AVX2 where present and plain C
 * elsewhere.  Under valgrind, which emulates no AVX-512, the CPU reports
 * AVX2 and that is what runs.
 */
#include "internal.h"

static int
cpu_has(enum attn_simd_level level)
{
	switch (level) {
	case ATTN_SIMD_C:
		return 1;
#if defined(__x86_64__) && defined(__GNUC__)
	case ATTN_SIMD_AVX2:
		return __builtin_cpu_supports("avx2") &&
		    __builtin_cpu_supports("fma");
	case ATTN_SIMD_AVX512:
		return __builtin_cpu_supports("avx512f");
#endif
	default:
		return 0;
	}
}

const struct attn_simd *
attn_simd_get(enum attn_simd_level level)
{
	static const struct attn_simd *const sets[ATTN_SIMD_COUNT] = {
		[ATTN_SIMD_C] = &attn_simd_c,
		[ATTN_SIMD_AVX2] = &attn_simd_avx2,
		[ATTN_SIMD_AVX512] = &attn_simd_avx512,
	};

	if ((unsigned)level >= ATTN_SIMD_COUNT || !cpu_has(level))
		return NULL;
	return sets[level];
}

const struct attn_simd *
attn_simd_best(void)
{
	int level;

	for (level = ATTN_SIMD_COUNT - 1; level > ATTN_SIMD_C; level--)
		if (cpu_has((enum attn_simd_level)level))
			break;
	return attn_simd_get((enum attn_simd_level)level);
}
