/*
 * simd.c - which of the streaming kernel's loop sets this CPU runs: asked
 * of the CPU at run time (GCC's __builtin_cpu_supports, which also checks
 * that the OS saves the wide registers), so that one portable binary,
 * built without -march, uses AVX-512 or AVX2 where present and plain C
 * elsewhere.  Under valgrind, which emulates no AVX-512, the CPU reports
 * AVX2 and that is what runs.  A caller may cap the set (attn_config's
 * isa), which every set allows since they give the same bytes.
 */
#include "internal.h"

static int
cpu_has(enum attn_isa isa)
{
	switch (isa) {
	case ATTN_ISA_C:
		return 1;
#if defined(__x86_64__) && defined(__GNUC__)
	case ATTN_ISA_AVX2:
		return __builtin_cpu_supports("avx2") &&
		    __builtin_cpu_supports("fma");
	case ATTN_ISA_AVX512:
		return __builtin_cpu_supports("avx512f");
#endif
	default:
		return 0;
	}
}

static const struct attn_simd *const sets[ATTN_ISA_COUNT] = {
	[ATTN_ISA_C] = &attn_simd_c,
	[ATTN_ISA_AVX2] = &attn_simd_avx2,
	[ATTN_ISA_AVX512] = &attn_simd_avx512,
};

const char *
attn_isa_name(enum attn_isa isa)
{
	if (isa == ATTN_ISA_AUTO)
		return "auto";
	return (unsigned)isa < ATTN_ISA_COUNT ? sets[isa]->name : "unknown";
}

const struct attn_simd *
attn_simd_get(enum attn_isa isa)
{
	if ((unsigned)isa >= ATTN_ISA_COUNT || !cpu_has(isa))
		return NULL;
	return sets[isa];
}

const struct attn_simd *
attn_simd_best(enum attn_isa most)
{
	int isa = (unsigned)most >= ATTN_ISA_COUNT || most == ATTN_ISA_AUTO ?
	    ATTN_ISA_COUNT - 1 : (int)most;

	for (; isa > ATTN_ISA_C; isa--)
		if (cpu_has((enum attn_isa)isa))
			break;
	return sets[isa];
}
