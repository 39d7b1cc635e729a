/*
 * fuzz_cli_table.h - the words fuzz_cli may put on attn's command line.
 *
 * Each byte of the first line of a fuzz_cli input picks one entry,
 * byte % FUZZ_CLI_NWORDS: one or two argv words, valid and invalid values
 * alike.  Nothing else reaches argv, so no input can name a path outside
 * the harness's temporary directory.  A word may hold one placeholder
 * (from '@' to its end), which the harness replaces by a path in that
 * directory:
 *
 *   @<i><e>  the file holding segment i (0-4) of the input, written there
 *            with extension e: j .json, c .csv, t .tsv, x .txt, y .npy,
 *            n none, z .npz, l .jsonl
 *   @o       DIR/out.csv, absent before the run (an output target)
 *   @O       DIR/out.npz, likewise
 *   @m       DIR/no/such/out.csv, in a directory that does not exist
 *   @D       DIR itself, a directory
 *   @M       DIR/missing.json, an input that does not exist
 *
 * Entries starting with '!' are directives to the harness, not words:
 * "!full" makes every write to standard output fail with ENOSPC, as on
 * /dev/full.
 *
 * Options that attn(1) names but a CLI may not have yet are here too:
 * they are usage errors until they exist, and fuzzed from the day they do.
 * Append new entries at the end, so that the seeds keep their meaning,
 * and run make fuzz-cli-seeds after any change (entry 10, which a seed
 * reaches through byte 10 + N since '\n' ends the line, moves with N).
 */
#ifndef ATTN_FUZZ_CLI_TABLE_H
#define ATTN_FUZZ_CLI_TABLE_H

struct fuzz_word {
	const char *a, *b;	/* b NULL: one word */
};

static const struct fuzz_word fuzz_cli_words[] = {
	/* operands */
	{ "@0j", 0 }, { "@1j", 0 }, { "@2j", 0 },
	{ "@0c", 0 }, { "@1c", 0 }, { "@2c", 0 },
	{ "@0t", 0 }, { "@1t", 0 }, { "@2t", 0 },
	{ "@0x", 0 }, { "@1x", 0 }, { "@2x", 0 },
	{ "@0n", 0 }, { "@1n", 0 }, { "@2n", 0 },
	{ "@0y", 0 }, { "@3j", 0 }, { "@4j", 0 },
	{ "-", 0 }, { "@M", 0 }, { "@D", 0 }, { "--", 0 },
	/* --self */
	{ "--self", "@0j" }, { "--self", "@0c" }, { "--self", "@0n" },
	{ "--self", "-" }, { "--self=@0x", 0 }, { "--self", 0 },
	/* options without a value, and bad spellings */
	{ "-e", 0 }, { "--explain", 0 }, { "--header", 0 },
	{ "--no-scale", 0 }, { "--causal", 0 }, { "--mask-invert", 0 },
	{ "--alibi", 0 }, { "-h", 0 }, { "--help", 0 }, { "-V", 0 },
	{ "--version", 0 }, { "-eh", 0 }, { "-eV", 0 }, { "-ez", 0 },
	{ "--explain=1", 0 }, { "--expl", 0 }, { "--bogus", 0 }, { "-x", 0 },
	{ "--", "-e" }, { "-", "-" },
	/* --stage */
	{ "-s", "all" }, { "-s", "output" }, { "-s", "weights" },
	{ "-s", "scores,scaled" }, { "-s", "weights,output" }, { "-s", "lse" },
	{ "-s", "mask" }, { "-s", "lse,mask,scores" }, { "-s", "" },
	{ "-s", "all,output" }, { "-s", "bogus" }, { "-s", "output,output" },
	{ "-s", "weights," }, { "-sall", 0 }, { "--stage=lse,mask", 0 },
	{ "--stage", 0 }, { "-s", 0 },
	/* --format */
	{ "-f", "table" }, { "-f", "csv" }, { "-f", "tsv" }, { "-f", "json" },
	{ "-f", "npy" }, { "-f", "xml" }, { "-fcsv", 0 },
	{ "--format=json", 0 }, { "--npy-dtype", "f4" },
	/* --digits */
	{ "-d", "1" }, { "-d", "3" }, { "-d", "17" }, { "-d", "0" },
	{ "-d", "18" }, { "-d", "x" }, { "-d", "4z" }, { "-d", "-1" },
	{ "-d", "99999999999999999999" }, { "-d17", 0 },
	/* --scale */
	{ "--scale", "0.5" }, { "--scale", "0" }, { "--scale", "-1" },
	{ "--scale", "1e308" }, { "--scale", "inf" }, { "--scale", "nan" },
	{ "--scale", "x" }, { "--scale", "1e999" }, { "--scale", "" },
	{ "--scale=1e-320", 0 },
	/* labels */
	{ "--query-labels", "a,b" }, { "--query-labels", "a" },
	{ "--query-labels", "a,,b" }, { "--query-labels", "" },
	{ "--query-labels", "," }, { "--query-labels", "x,\"y\",z" },
	{ "--key-labels", "k,l" }, { "--key-labels", "k" },
	{ "--key-labels", "p,q,r" }, { "--key-labels", "a\tb,\xc3\xa9" },
	/* alignment, masks and biases */
	{ "--align", "top-left" }, { "--align", "bottom-right" },
	{ "--align", "middle" },
	{ "-m", "@3j" }, { "-m", "@3c" }, { "-m", "@3n" }, { "-m", "-" },
	{ "--mask", "@M" },
	{ "--bias", "@4j" }, { "--bias", "@4c" }, { "--bias", "@4n" },
	{ "--bias", "@D" },
	{ "--window", "1,1" }, { "--window", "0,0" }, { "--window", "2,0" },
	{ "--window", "x" }, { "--window", "1," }, { "--window", ",1" },
	{ "--window", "99999999999999999999,1" }, { "--window", "-1,2" },
	{ "--window", "1,18446744073709551615" },
	{ "--window", "9223372036854775807,9223372036854775807" },
	{ "--softcap", "1" }, { "--softcap", "30" }, { "--softcap", "0" },
	{ "--softcap", "-1" }, { "--softcap", "inf" },
	{ "--softcap", "1e-300" }, { "--softcap", "x" },
	{ "--masked-rows", "zero" }, { "--masked-rows", "nan" },
	{ "--masked-rows", "uniform" }, { "--masked-rows", "none" },
	{ "--like", "torch" }, { "--like", "flash" }, { "--like", "jax" },
	{ "--like", "tf" },
	/* heads */
	{ "--heads", "1" }, { "--heads", "2" }, { "--heads", "3" },
	{ "--heads", "4" }, { "--heads", "0" }, { "--heads", "x" },
	{ "--heads", "9223372036854775807" },
	{ "--heads", "99999999999999999999" },
	{ "--kv-heads", "1" }, { "--kv-heads", "2" }, { "--kv-heads", "0" },
	{ "--kv-heads", "3" },
	/* output */
	{ "-o", "@o" }, { "-o", "-" }, { "-o", "@m" }, { "-o", "@D" },
	{ "-o", "@0j" }, { "--output=@o", 0 }, { "-o@o", 0 },
	{ "!full", 0 },
	/* in attn(1), maybe not in the CLI yet */
	{ "--check", "@4j" }, { "--rtol", "1e-3" }, { "--atol", "0" },
	{ "--stats", 0 }, { "--heatmap", 0 }, { "--arithmetic", 0 },
	{ "--query", "1" }, { "--query", "2,1" }, { "--query", "0" },
	{ "--layout", "bshd" }, { "--emulate", "fp16" }, { "--factor", "2" },
	{ "-j", "2" }, { "--threads=1", 0 }, { "--svg", "@o" },
	{ "gen", 0 }, { "2x3", 0 }, { "--seed", "7" },
	/* the backward pass: dO from a segment, stdin or nowhere */
	{ "--grad", "@4j" }, { "--grad", "@3c" }, { "--grad", "-" },
	{ "--grad", "@M" }, { "-s", "grad_q,grad_k,grad_v" },
	{ "-s", "grad_bias,delta" }, { "-s", "grad_weights" },
	/* from embeddings: a layer, RoPE, sinks */
	{ "--proj", "@3j" }, { "--proj", "@4j" }, { "--proj", "-" },
	{ "--proj", "@M" }, { "-s", "q,k,v,projected" },
	{ "-s", "q_rot,k_rot" }, { "--rope", 0 }, { "--rope", "500000" },
	{ "--rope=0", 0 }, { "--rope-style", "interleaved" },
	{ "--rope-style", "neox" }, { "--sinks", "@4c" }, { "--sinks", "@3j" },
	{ "--sinks", "-" },
	/* .npy, layouts and --check (appended: seeds index the rows) */
	{ "--check", "@4y" }, { "--emulate", "fp32" }, { "--emulate", "bf16" },
	{ "--layout", "bhsd" }, { "--factor", "0.5" }, { "--rtol", "0.5" },
	{ "-s", "lse" },
	/* packed sequences (varlen), used keys, the lse's conventions, .npz
	 * in and out, JSON Lines (appended likewise) */
	{ "--cu-seqlens-q", "0,2" }, { "--cu-seqlens-q", "0,1,3" },
	{ "--cu-seqlens-q", "0,0,2" }, { "--cu-seqlens-q", "2,0" },
	{ "--cu-seqlens-q", "@1c" }, { "--cu-seqlens-q", "@1y" },
	{ "--cu-seqlens-k", "0,2" }, { "--cu-seqlens-k", "0,1,3" },
	{ "--cu-seqlens-k", "0,3,3" }, { "--cu-seqlens-k", "0,x" },
	{ "--cu-seqlens-k", "@2j" },
	{ "--seqused-k", "1" }, { "--seqused-k", "1,2" }, { "--seqused-k", "0" },
	{ "--seqused-k", "9" }, { "--seqused-k", "@2c" },
	{ "--lse-base", "2" }, { "--lse-base", "e" }, { "--lse-base", "10" },
	{ "--lse-masked", "inf" }, { "--lse-masked", "0" },
	{ "-s", "output,lse" }, { "@1y", 0 }, { "@2y", 0 },
	{ "--grad", "@3y" },
	{ "-f", "npz" }, { "-o", "@O" },
	{ "--check", "@4z" }, { "--check", "@3z" }, { "--proj", "@3z" },
	{ "--proj", "@4z" },
	{ "@0l", 0 }, { "@1l", 0 }, { "--self", "@0l" }, { "-m", "@3l" },
	{ "@0z", 0 },
};

#define FUZZ_CLI_NWORDS \
	(sizeof fuzz_cli_words / sizeof fuzz_cli_words[0])

/* The separator between the files of a fuzz_cli input. */
#define FUZZ_CLI_SEP "\n%%\n"

/* Segments: 0-4 are files, 5 is standard input. */
#define FUZZ_CLI_NSEG 6

/* At most this many option bytes are read from the first line. */
#define FUZZ_CLI_MAX_WORDS 24

#endif /* ATTN_FUZZ_CLI_TABLE_H */
