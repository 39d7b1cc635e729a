/*
 * simd_loops.h - the streaming kernel's inner loops (struct attn_simd in
 * internal.h), written once for any vector width.  lib/simd_avx2.c and
 * lib/simd_avx512.c each define the vector type and operations below,
 * then include this file, which defines their struct attn_simd.  Lane i
 * of every loop does what lib/simd_c.c does for row i, operation for
 * operation, so every width gives the same bytes.
 *
 * Register tiles: 3 vectors of queries (3 VL rows) by KT keys for Q K^T,
 * and 3 vectors of queries by KT value columns for P V: 3 KT
 * accumulators, 3 loads and a broadcast, which for KT = 8 on AVX-512 (32
 * registers) and KT = 4 on AVX2 (16) fills the register file without
 * spilling.  On a 2-core AMD EPYC (Zen 4), 24 x 8 tiles ran Q K^T and
 * P V at about 93% of OpenBLAS dgemm on one thread.
 *
 * What the including file defines:
 *	SIMD_TARGET	the function attribute that enables the instructions
 *	SIMD_STRUCT	the name of the struct attn_simd to define
 *	SIMD_LABEL	its name, "avx2"
 *	VEC, VL, KT	the vector type, its lanes, keys a tile holds
 *	vzero() vset1(x) vbcast(p)		a vector of 0, of x, of *p
 *	vload(p) vstore(p, v)			aligned; vloadu, vstoreu not
 *	vadd vsub vmul vdiv (a, b)		lane by lane, rounded once
 *	vfma(a, b, c)				a * b + c, rounded once
 *	vmax(a, b)				b unless a > b (as MAXPD)
 *	vzero_ninf(x)				0 where x is -inf, else x
 *	vexp(x)					attn_exp, lane by lane
 */

SIMD_TARGET static void
simd_scores(const double *qt, size_t br, size_t d_k, const double *k,
    size_t ldk, size_t nk, double scale, double *st, double *mb)
{
	const VEC sc = vset1(scale);
	size_t i0, j0, c, jj;

	for (i0 = 0; i0 < br; i0 += 3 * VL) {
		VEC m0 = vset1(-INFINITY), m1 = m0, m2 = m0;

		for (j0 = 0; j0 + KT <= nk; j0 += KT) {
			const double *kp = k + j0 * ldk;
			VEC a[KT][3];

#pragma GCC unroll 8
			for (jj = 0; jj < KT; jj++)
				a[jj][0] = a[jj][1] = a[jj][2] = vzero();
			for (c = 0; c < d_k; c++) {
				const double *qp = qt + c * br + i0;
				const VEC q0 = vload(qp);
				const VEC q1 = vload(qp + VL);
				const VEC q2 = vload(qp + 2 * VL);

#pragma GCC unroll 8
				for (jj = 0; jj < KT; jj++) {
					const VEC b = vbcast(kp + jj * ldk + c);

					a[jj][0] = vfma(q0, b, a[jj][0]);
					a[jj][1] = vfma(q1, b, a[jj][1]);
					a[jj][2] = vfma(q2, b, a[jj][2]);
				}
			}
#pragma GCC unroll 8
			for (jj = 0; jj < KT; jj++) {
				double *sp = st + (j0 + jj) * br + i0;
				const VEC x0 = vmul(a[jj][0], sc);
				const VEC x1 = vmul(a[jj][1], sc);
				const VEC x2 = vmul(a[jj][2], sc);

				vstore(sp, x0);
				vstore(sp + VL, x1);
				vstore(sp + 2 * VL, x2);
				m0 = vmax(m0, x0);
				m1 = vmax(m1, x1);
				m2 = vmax(m2, x2);
			}
		}
		/* The last keys of a block, one at a time. */
		for (; j0 < nk; j0++) {
			VEC a0 = vzero(), a1 = a0, a2 = a0;
			double *sp = st + j0 * br + i0;

			for (c = 0; c < d_k; c++) {
				const double *qp = qt + c * br + i0;
				const VEC b = vbcast(k + j0 * ldk + c);

				a0 = vfma(vload(qp), b, a0);
				a1 = vfma(vload(qp + VL), b, a1);
				a2 = vfma(vload(qp + 2 * VL), b, a2);
			}
			a0 = vmul(a0, sc);
			a1 = vmul(a1, sc);
			a2 = vmul(a2, sc);
			vstore(sp, a0);
			vstore(sp + VL, a1);
			vstore(sp + 2 * VL, a2);
			m0 = vmax(m0, a0);
			m1 = vmax(m1, a1);
			m2 = vmax(m2, a2);
		}
		vstore(mb + i0, m0);
		vstore(mb + i0 + VL, m1);
		vstore(mb + i0 + 2 * VL, m2);
	}
}

SIMD_TARGET static void
simd_softmax(double *st, size_t br, size_t nk, double *m, double *l,
    const double *mb, double *alpha)
{
	size_t i, j;

	for (i = 0; i < br; i += VL) {
		const VEC mo = vload(m + i);
		const VEC mn = vmax(vload(mb + i), mo);
		const VEC mu = vzero_ninf(mn);
		const VEC a = vexp(vsub(mo, mu));
		VEC s = vmul(vload(l + i), a);

		for (j = 0; j < nk; j++) {
			double *sp = st + j * br + i;
			const VEC e = vexp(vsub(vload(sp), mu));

			vstore(sp, e);
			s = vadd(s, e);
		}
		vstore(m + i, mn);
		vstore(l + i, s);
		vstore(alpha + i, a);
	}
}

SIMD_TARGET static void
simd_accumulate(const double *st, size_t br, size_t nk, const double *v,
    size_t ldv, size_t d_v, const double *alpha, double *ot)
{
	size_t i0, c0, j, cc;

	for (i0 = 0; i0 < br; i0 += 3 * VL) {
		const VEC al0 = vload(alpha + i0);
		const VEC al1 = vload(alpha + i0 + VL);
		const VEC al2 = vload(alpha + i0 + 2 * VL);

		for (c0 = 0; c0 + KT <= d_v; c0 += KT) {
			VEC a[KT][3];

#pragma GCC unroll 8
			for (cc = 0; cc < KT; cc++) {
				const double *op = ot + (c0 + cc) * br + i0;

				a[cc][0] = vmul(vload(op), al0);
				a[cc][1] = vmul(vload(op + VL), al1);
				a[cc][2] = vmul(vload(op + 2 * VL), al2);
			}
			for (j = 0; j < nk; j++) {
				const double *pp = st + j * br + i0;
				const double *vp = v + j * ldv + c0;
				const VEC p0 = vload(pp);
				const VEC p1 = vload(pp + VL);
				const VEC p2 = vload(pp + 2 * VL);

#pragma GCC unroll 8
				for (cc = 0; cc < KT; cc++) {
					const VEC b = vbcast(vp + cc);

					a[cc][0] = vfma(p0, b, a[cc][0]);
					a[cc][1] = vfma(p1, b, a[cc][1]);
					a[cc][2] = vfma(p2, b, a[cc][2]);
				}
			}
#pragma GCC unroll 8
			for (cc = 0; cc < KT; cc++) {
				double *op = ot + (c0 + cc) * br + i0;

				vstore(op, a[cc][0]);
				vstore(op + VL, a[cc][1]);
				vstore(op + 2 * VL, a[cc][2]);
			}
		}
		/* The last value columns, one at a time. */
		for (; c0 < d_v; c0++) {
			double *op = ot + c0 * br + i0;
			VEC a0 = vmul(vload(op), al0);
			VEC a1 = vmul(vload(op + VL), al1);
			VEC a2 = vmul(vload(op + 2 * VL), al2);

			for (j = 0; j < nk; j++) {
				const double *pp = st + j * br + i0;
				const VEC b = vbcast(v + j * ldv + c0);

				a0 = vfma(vload(pp), b, a0);
				a1 = vfma(vload(pp + VL), b, a1);
				a2 = vfma(vload(pp + 2 * VL), b, a2);
			}
			vstore(op, a0);
			vstore(op + VL, a1);
			vstore(op + 2 * VL, a2);
		}
	}
}

SIMD_TARGET static void
simd_weights(double *w, size_t n, double m, double l)
{
	const VEC vm = vset1(m), vl = vset1(l);
	size_t j;

	for (j = 0; j + VL <= n; j += VL)
		vstoreu(w + j, vdiv(vexp(vsub(vloadu(w + j), vm)), vl));
	for (; j < n; j++)
		w[j] = attn_exp(w[j] - m) / l;
}

SIMD_TARGET static void
simd_exp(const double *x, double *y, size_t n)
{
	size_t j;

	for (j = 0; j + VL <= n; j += VL)
		vstoreu(y + j, vexp(vloadu(x + j)));
	for (; j < n; j++)
		y[j] = attn_exp(x[j]);
}

const struct attn_simd SIMD_STRUCT = {
	SIMD_LABEL, simd_scores, simd_softmax, simd_accumulate, simd_weights,
	simd_exp,
};
