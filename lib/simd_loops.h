/*
 * simd_loops.h - the streaming kernel's inner loops (struct attn_simd in
 * internal.h), written once for any vector width.  lib/simd_avx2.c and
 * lib/simd_avx512.c each define the vector type and operations below,
 * then include this file, which defines their struct attn_simd.  Lane i
 * of every loop does what lib/simd_c.c does for row i, operation for
 * operation, so every width gives the same bytes.
 *
 * Register tiles: RT vectors of queries (RT VL rows) by KT keys for
 * Q K^T, and RT vectors of queries by KT value columns for P V: RT KT
 * accumulators, RT loads and a broadcast.  The softmax step takes XU
 * vectors of rows through exp together, step by step, so that exp's long
 * chain of dependent operations has XU independent ones at each step.
 * Each instruction set picks its RT, KT and XU and says how it chose
 * them: AVX-512 24 x 8 tiles (RT 3, KT 8, XU 1), AVX2 12 x 4 (RT 3, KT 4,
 * XU 3).  Any choice gives the same bytes: it changes which rows and keys
 * a tile holds, never the order of a row's sums.
 *
 * What the including file defines:
 *	SIMD_TARGET	the function attribute that enables the instructions
 *	SIMD_STRUCT	the name of the struct attn_simd to define
 *	SIMD_LABEL	its name, "avx2"
 *	VEC, VL		the vector type, its lanes
 *	RT, KT, XU	the tiles above; RT VL and XU VL divide ATTN_SIMD_ROWS
 *	vzero() vset1(x) vbcast(p)		a vector of 0, of x, of *p
 *	vload(p) vstore(p, v)			aligned; vloadu, vstoreu not
 *	vadd vsub vmul vdiv (a, b)		lane by lane, rounded once
 *	vfma(a, b, c)				a * b + c, rounded once
 *	vmax(a, b)				b unless a > b (as MAXPD);
 *						vmax(x, m) stays with the
 *						first of equal maxima
 *	vzero_ninf(x)				0 where x is -inf, else x
 *	vzero_where_zero(p, x)			+0 where p is 0, else x
 *	vexp(x)					attn_exp of the XU vectors
 *						x[0..XU), lane by lane, in
 *						place
 */

#define FOR_R(u) for (u = 0; u < RT; u++)
#define FOR_X(u) for (u = 0; u < XU; u++)

_Static_assert(ATTN_SIMD_ROWS % (RT * VL) == 0 &&
    ATTN_SIMD_ROWS % (XU * VL) == 0,
    "a block of ATTN_SIMD_ROWS rows is a whole number of tiles");

SIMD_TARGET static void
simd_scores(const double *qt, size_t br, size_t d_k, const double *k,
    size_t ldk, size_t nk, double scale, double *tile, double *mb)
{
	const VEC sc = vset1(scale);
	size_t i0, j0, c, jj, u;

	for (i0 = 0; i0 < br; i0 += RT * VL) {
		VEC m[RT];

#pragma GCC unroll 8
		FOR_R(u)
			m[u] = vset1(-INFINITY);
		for (j0 = 0; j0 + KT <= nk; j0 += KT) {
			const double *kp = k + j0 * ldk;
			VEC a[KT][RT];

#pragma GCC unroll 8
			for (jj = 0; jj < KT; jj++)
#pragma GCC unroll 8
				FOR_R(u)
					a[jj][u] = vzero();
			for (c = 0; c < d_k; c++) {
				const double *qp = qt + c * br + i0;
				VEC q[RT];

#pragma GCC unroll 8
				FOR_R(u)
					q[u] = vload(qp + u * VL);
#pragma GCC unroll 8
				for (jj = 0; jj < KT; jj++) {
					const VEC b = vbcast(kp + jj * ldk + c);

#pragma GCC unroll 8
					FOR_R(u)
						a[jj][u] = vfma(q[u], b, a[jj][u]);
				}
			}
#pragma GCC unroll 8
			for (jj = 0; jj < KT; jj++) {
				double *sp = tile + (j0 + jj) * br + i0;

#pragma GCC unroll 8
				FOR_R(u) {
					const VEC x = vmul(a[jj][u], sc);

					vstore(sp + u * VL, x);
					m[u] = vmax(x, m[u]);
				}
			}
		}
		/* The last keys of a block, one at a time. */
		for (; j0 < nk; j0++) {
			double *sp = tile + j0 * br + i0;
			VEC a[RT];

#pragma GCC unroll 8
			FOR_R(u)
				a[u] = vzero();
			for (c = 0; c < d_k; c++) {
				const double *qp = qt + c * br + i0;
				const VEC b = vbcast(k + j0 * ldk + c);

#pragma GCC unroll 8
				FOR_R(u)
					a[u] = vfma(vload(qp + u * VL), b, a[u]);
			}
#pragma GCC unroll 8
			FOR_R(u) {
				a[u] = vmul(a[u], sc);
				vstore(sp + u * VL, a[u]);
				m[u] = vmax(a[u], m[u]);
			}
		}
#pragma GCC unroll 8
		FOR_R(u)
			vstore(mb + i0 + u * VL, m[u]);
	}
}

SIMD_TARGET static void
simd_softmax(double *tile, size_t br, size_t nk, double *m, double *l,
    const double *mb, double *alpha)
{
	size_t i, j, u;

	for (i = 0; i < br; i += XU * VL) {
		VEC mn[XU], mu[XU], s[XU], x[XU];

#pragma GCC unroll 8
		FOR_X(u) {
			const VEC mo = vload(m + i + u * VL);

			mn[u] = vmax(vload(mb + i + u * VL), mo);
			mu[u] = vzero_ninf(mn[u]);
			x[u] = vsub(mo, mu[u]);
		}
		vexp(x);
#pragma GCC unroll 8
		FOR_X(u) {
			s[u] = vmul(vload(l + i + u * VL), x[u]);
			vstore(alpha + i + u * VL, x[u]);
		}
		for (j = 0; j < nk; j++) {
			double *sp = tile + j * br + i;

#pragma GCC unroll 8
			FOR_X(u)
				x[u] = vsub(vload(sp + u * VL), mu[u]);
			vexp(x);
#pragma GCC unroll 8
			FOR_X(u) {
				vstore(sp + u * VL, x[u]);
				s[u] = vadd(s[u], x[u]);
			}
		}
#pragma GCC unroll 8
		FOR_X(u) {
			vstore(m + i + u * VL, mn[u]);
			vstore(l + i + u * VL, s[u]);
		}
	}
}

SIMD_TARGET static void
simd_accumulate(const double *tile, size_t br, size_t nk, const double *v,
    size_t ldv, size_t d_v, const double *alpha, double *ot)
{
	size_t i0, c0, j, cc, u;

	for (i0 = 0; i0 < br; i0 += RT * VL) {
		VEC al[RT];

#pragma GCC unroll 8
		FOR_R(u)
			al[u] = vload(alpha + i0 + u * VL);
		for (c0 = 0; c0 + KT <= d_v; c0 += KT) {
			VEC a[KT][RT];

#pragma GCC unroll 8
			for (cc = 0; cc < KT; cc++) {
				const double *op = ot + (c0 + cc) * br + i0;

#pragma GCC unroll 8
				FOR_R(u)
					a[cc][u] = vmul(vload(op + u * VL), al[u]);
			}
			for (j = 0; j < nk; j++) {
				const double *pp = tile + j * br + i0;
				const double *vp = v + j * ldv + c0;
				VEC p[RT];

#pragma GCC unroll 8
				FOR_R(u)
					p[u] = vload(pp + u * VL);
#pragma GCC unroll 8
				for (cc = 0; cc < KT; cc++) {
					const VEC b = vbcast(vp + cc);

#pragma GCC unroll 8
					FOR_R(u)
						a[cc][u] = vfma(p[u], b, a[cc][u]);
				}
			}
#pragma GCC unroll 8
			for (cc = 0; cc < KT; cc++) {
				double *op = ot + (c0 + cc) * br + i0;

#pragma GCC unroll 8
				FOR_R(u)
					vstore(op + u * VL, a[cc][u]);
			}
		}
		/* The last value columns, one at a time. */
		for (; c0 < d_v; c0++) {
			double *op = ot + c0 * br + i0;
			VEC a[RT];

#pragma GCC unroll 8
			FOR_R(u)
				a[u] = vmul(vload(op + u * VL), al[u]);
			for (j = 0; j < nk; j++) {
				const double *pp = tile + j * br + i0;
				const VEC b = vbcast(v + j * ldv + c0);

#pragma GCC unroll 8
				FOR_R(u)
					a[u] = vfma(vload(pp + u * VL), b, a[u]);
			}
#pragma GCC unroll 8
			FOR_R(u)
				vstore(op + u * VL, a[u]);
		}
	}
}

SIMD_TARGET static void
simd_weights(double *w, size_t n, double m, double l)
{
	const VEC vm = vset1(m), vl = vset1(l);
	VEC x[XU];
	size_t j, u;

	for (j = 0; j + XU * VL <= n; j += XU * VL) {
#pragma GCC unroll 8
		FOR_X(u)
			x[u] = vsub(vloadu(w + j + u * VL), vm);
		vexp(x);
#pragma GCC unroll 8
		FOR_X(u)
			vstoreu(w + j + u * VL, vdiv(x[u], vl));
	}
	for (; j < n; j++)
		w[j] = attn_exp(w[j] - m) / l;
}

SIMD_TARGET static void
simd_exp(const double *x, double *y, size_t n)
{
	VEC v[XU];
	size_t j, u;

	for (j = 0; j + XU * VL <= n; j += XU * VL) {
#pragma GCC unroll 8
		FOR_X(u)
			v[u] = vloadu(x + j + u * VL);
		vexp(v);
#pragma GCC unroll 8
		FOR_X(u)
			vstoreu(y + j + u * VL, v[u]);
	}
	for (; j < n; j++)
		y[j] = attn_exp(x[j]);
}

/* Non-finite values are caught as x * 0, which is nan for them and a
 * zero otherwise, summed into one vector. */
SIMD_TARGET static int
simd_grad(double *p, double *dp, size_t n, double delta, double scale)
{
	const VEC vd = vset1(delta), vs = vset1(scale), z = vzero();
	VEC bad = vzero();
	double lanes[VL];
	size_t j, u;
	int any = 0;

	for (j = 0; j + VL <= n; j += VL) {
		const VEC w = vloadu(p + j), d = vloadu(dp + j);
		const VEC ds = vzero_where_zero(w, vmul(w, vsub(d, vd)));

		bad = vadd(bad, vadd(vmul(d, z), vmul(ds, z)));
		vstoreu(dp + j, ds);
		vstoreu(p + j, vmul(ds, vs));
	}
	vstoreu(lanes, bad);
	for (u = 0; u < VL; u++)
		any |= isnan(lanes[u]);
	for (; j < n; j++) {
		const double ds = p[j] == 0.0 ? 0.0 : p[j] * (dp[j] - delta);

		any |= !isfinite(dp[j]) || !isfinite(ds);
		dp[j] = ds;
		p[j] = ds * scale;
	}
	return any;
}

const struct attn_simd SIMD_STRUCT = {
	SIMD_LABEL, simd_scores, simd_softmax, simd_accumulate, simd_weights,
	simd_exp, simd_grad,
};
