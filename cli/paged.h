/*
 * paged.h - K and V given as KV caches (attn(1), PAGED KV CACHES):
 * paged, named by --block-table or by FlashInfer's --kv-indptr,
 * --kv-indices and --kv-last-page-len, or a row of keys a batch with
 * --key-leftpad alone; their keys in use gathered by libattn
 * (attn_paged_gather) into the K and V every run takes (paged.c).
 */
#ifndef ATTN_PAGED_H
#define ATTN_PAGED_H

#include "attn.h"
#include "inputs.h"
#include "options.h"

/* What K and V are, by the options given. */
enum caches paged_caches(const struct options *o);

/*
 * Once K and V are read and folded (in->in.k and in->in.v the caches),
 * their keys in use gathered: in->in.k and in->in.v become the gathered
 * stacks (held in in->gathered), --seqused-k the counts of keys left
 * after each leftpad, and with packed queries the keys' offsets made, a
 * sequence every S rows.  Errors are data errors.
 */
enum attn_status paged_gather(struct inputs *in, struct attn_error *err);

#endif
