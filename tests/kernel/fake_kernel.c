/*
 * fake_kernel.c - a float32 attention kernel, as someone writing one
 * would, with the mistakes such kernels are known for, so that
 * tests/kernel/run.sh can show what `attn --check` says of each.
 *
 *	fake_kernel MODE DIR
 *
 * writes DIR/q.npy, DIR/k.npy and DIR/v.npy (float32, B x H x S x D as
 * PyTorch lays them out, grouped-query: 4 query heads on 2 KV heads),
 * seeded so that every run is the same, with logits large enough (up to
 * about 100) that exp overflows float32 without the max subtracted; then
 * computes attention in float32 and writes DIR/out.npy.  MODE:
 *
 *	good      FlashAttention's loop: keys in tiles of 16, an online
 *	          softmax (running max m, sum l, accumulator o; on a new max
 *	          rescale by exp(m_old - m_new)), fma for the dot products;
 *	          its order is not the naive one, so it is not bit-equal to
 *	          attn's float32 emulation, only as accurate
 *	nomax     the textbook softmax without the max: exp(s) / sum exp(s)
 *	scale     1/d instead of 1/sqrt(d)
 *	layout    output written B x T x H x D (FlashAttention's) where
 *	          B x H x T x D was asked for (T = H, so the shapes agree)
 *	gqa       query head h reads KV head h % G instead of h / (H / G)
 *	dk        the backward pass's dK for an upstream gradient dO (also
 *	          written, DIR/do.npy), in DIR/dk.npy: for each query head
 *	          dS = P * (dP - rowsum(dO * O)), dP = dO V^T, and dK = dS^T Q
 *	          * scale, summed over the query heads that share a KV head
 *	dk-nosum  the same, each query head's dK written over the last one's
 *	          instead of added to it: the GQA sum missing
 *
 * Standalone C11 with libm, on purpose: it shares nothing with attn.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, H = 4, G = 2, T = 4, S = 37, D = 16, TILE = 16 };

static uint64_t state = 0x9E3779B97F4A7C15u;

/* Uniform in [-1, 1), from splitmix64. */
static float
uniform(void)
{
	uint64_t z = (state += 0x9E3779B97F4A7C15u);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	z ^= z >> 31;
	return (float)((double)(z >> 11) * 0x1p-53 * 2.0 - 1.0);
}

/* A float32 .npy file of the given dims, as numpy.save writes one. */
static void
save(const char *dir, const char *name, const float *x, const int *dims,
    int nd)
{
	char path[512], dict[128];
	size_t n = 1, len, hlen;
	int k;
	FILE *fp;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	len = (size_t)snprintf(dict, sizeof dict, "{'descr': '<f4', "
	    "'fortran_order': False, 'shape': (");
	for (k = 0; k < nd; k++) {
		len += (size_t)snprintf(dict + len, sizeof dict - len, "%s%d",
		    k > 0 ? ", " : "", dims[k]);
		n *= (size_t)dims[k];
	}
	len += (size_t)snprintf(dict + len, sizeof dict - len, "), }");
	hlen = ((10 + len + 1 + 63) / 64) * 64 - 10;
	if ((fp = fopen(path, "wb")) == NULL) {
		perror(path);
		exit(2);
	}
	fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
	putc((int)(hlen & 0xFF), fp);
	putc((int)(hlen >> 8), fp);
	fwrite(dict, 1, len, fp);
	for (; len + 1 < hlen; len++)
		putc(' ', fp);
	putc('\n', fp);
	/* This test runs on little-endian machines, as the header says. */
	fwrite(x, sizeof *x, n, fp);
	if (fclose(fp) != 0) {
		perror(path);
		exit(2);
	}
}

static float q[B][H][T][D], k[B][G][S][D], v[B][G][S][D], o[B][H][T][D];
static float dout[B][H][T][D], dk[B][G][S][D];

/* dK for every KV head: the query heads' dS^T Q * scale, added up over
 * those that share one (or, with sum 0, the last one's alone). */
static void
backward_dk(float scale, int sum)
{
	float p[S], dp[S], ds[S], delta;
	int b, h, g, i, j, c;

	memset(dk, 0, sizeof dk);
	for (b = 0; b < B; b++)
		for (g = 0; g < G; g++)
			for (h = g * (H / G); h < (g + 1) * (H / G); h++) {
				if (!sum)
					memset(dk[b][g], 0, sizeof dk[b][g]);
				for (i = 0; i < T; i++) {
					float m = -INFINITY, l = 0.0f;

					for (j = 0; j < S; j++) {
						float dot = 0.0f;

						for (c = 0; c < D; c++)
							dot = fmaf(q[b][h][i][c],
							    k[b][g][j][c], dot);
						p[j] = dot * scale;
						m = fmaxf(m, p[j]);
					}
					for (j = 0; j < S; j++) {
						p[j] = expf(p[j] - m);
						l += p[j];
					}
					delta = 0.0f;
					for (c = 0; c < D; c++)
						delta = fmaf(dout[b][h][i][c],
						    o[b][h][i][c], delta);
					for (j = 0; j < S; j++) {
						p[j] /= l;
						dp[j] = 0.0f;
						for (c = 0; c < D; c++)
							dp[j] = fmaf(
							    dout[b][h][i][c],
							    v[b][g][j][c], dp[j]);
						ds[j] = p[j] * (dp[j] - delta);
						for (c = 0; c < D; c++)
							dk[b][g][j][c] = fmaf(
							    ds[j] * scale,
							    q[b][h][i][c],
							    dk[b][g][j][c]);
					}
				}
			}
}

/* One query row of FlashAttention's loop. */
static void
row_online(const float *qi, float (*kk)[D], float (*vv)[D],
    float scale, float *out)
{
	float m = -INFINITY, l = 0.0f, acc[D] = { 0 };
	int j0, j, c;

	for (j0 = 0; j0 < S; j0 += TILE) {
		float s[TILE], mt = m;
		int nj = S - j0 < TILE ? S - j0 : TILE;

		for (j = 0; j < nj; j++) {
			float dot = 0.0f;

			for (c = 0; c < D; c++)
				dot = fmaf(qi[c], kk[j0 + j][c], dot);
			s[j] = dot * scale;
			mt = fmaxf(mt, s[j]);
		}
		/* A new max: rescale what was summed so far. */
		l *= expf(m - mt);
		for (c = 0; c < D; c++)
			acc[c] *= expf(m - mt);
		m = mt;
		for (j = 0; j < nj; j++) {
			float p = expf(s[j] - m);

			l += p;
			for (c = 0; c < D; c++)
				acc[c] = fmaf(p, vv[j0 + j][c], acc[c]);
		}
	}
	for (c = 0; c < D; c++)
		out[c] = acc[c] / l;
}

/* One query row as a textbook writes softmax: no max subtracted. */
static void
row_nomax(const float *qi, float (*kk)[D], float (*vv)[D],
    float scale, float *out)
{
	float e[S], sum = 0.0f;
	int j, c;

	for (j = 0; j < S; j++) {
		float dot = 0.0f;

		for (c = 0; c < D; c++)
			dot = fmaf(qi[c], kk[j][c], dot);
		e[j] = expf(dot * scale);
		sum += e[j];
	}
	for (c = 0; c < D; c++) {
		out[c] = 0.0f;
		for (j = 0; j < S; j++)
			out[c] = fmaf(e[j] / sum, vv[j][c], out[c]);
	}
}

int
main(int argc, char **argv)
{
	static const int qd[4] = { B, H, T, D }, kd[4] = { B, G, S, D };
	static const int od_bshd[4] = { B, T, H, D };
	static float out_bshd[B][T][H][D];
	const char *mode, *dir;
	float scale;
	int b, h, i, c, g;

	if (argc != 3) {
		fprintf(stderr, "usage: fake_kernel good|nomax|scale|layout|"
		    "gqa|dk|dk-nosum DIR\n");
		return 2;
	}
	mode = argv[1];
	dir = argv[2];
	/* Queries and keys up to 16 and 8: logits past 88, where expf
	 * overflows. */
	for (b = 0; b < B; b++) {
		for (h = 0; h < H; h++)
			for (i = 0; i < T; i++)
				for (c = 0; c < D; c++)
					q[b][h][i][c] = 16.0f * uniform();
		for (g = 0; g < G; g++)
			for (i = 0; i < S; i++)
				for (c = 0; c < D; c++) {
					k[b][g][i][c] = 8.0f * uniform();
					v[b][g][i][c] = uniform();
				}
	}
	save(dir, "q.npy", &q[0][0][0][0], qd, 4);
	save(dir, "k.npy", &k[0][0][0][0], kd, 4);
	save(dir, "v.npy", &v[0][0][0][0], kd, 4);

	scale = strcmp(mode, "scale") == 0 ? 1.0f / D : 1.0f / sqrtf(D);
	for (b = 0; b < B; b++)
		for (h = 0; h < H; h++) {
			g = strcmp(mode, "gqa") == 0 ? h % G : h / (H / G);
			for (i = 0; i < T; i++) {
				if (strcmp(mode, "nomax") == 0)
					row_nomax(q[b][h][i], k[b][g], v[b][g],
					    scale, o[b][h][i]);
				else
					row_online(q[b][h][i], k[b][g], v[b][g],
					    scale, o[b][h][i]);
				memcpy(out_bshd[b][i][h], o[b][h][i],
				    sizeof o[b][h][i]);
			}
		}
	if (strcmp(mode, "layout") == 0)
		save(dir, "out.npy", &out_bshd[0][0][0][0], od_bshd, 4);
	else
		save(dir, "out.npy", &o[0][0][0][0], qd, 4);
	if (strncmp(mode, "dk", 2) == 0) {
		for (b = 0; b < B; b++)
			for (h = 0; h < H; h++)
				for (i = 0; i < T; i++)
					for (c = 0; c < D; c++)
						dout[b][h][i][c] = uniform();
		backward_dk(scale, strcmp(mode, "dk") == 0);
		save(dir, "do.npy", &dout[0][0][0][0], qd, 4);
		save(dir, "dk.npy", &dk[0][0][0][0], kd, 4);
	}
	return 0;
}
