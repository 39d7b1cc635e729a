/*
 * inputs.c - struct inputs (see inputs.h): the name of each operand in
 * messages, and giving them back.
 */
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "attn_io.h"
#include "attn_private.h"
#include "inputs.h"

static const char *const role[IN_COUNT] = {
	"Q", "K", "V", "mask", "bias", "dO", "sinks", "ALiBi slopes",
	"descale_q", "descale_k", "descale_v", "block table", "kv_indptr",
	"kv_indices", "kv_last_page_len", "dropout mask"
};

const char *
inputs_role(const struct inputs *in, size_t i)
{
	if (in->embeddings && i == IN_Q)
		return in->self ? "X" : "XQ";
	if (in->embeddings && i == IN_K)
		return "XKV";
	if (in->logits && i == IN_Q)
		return "SCORES";
	return role[i];
}

void
inputs_free(struct inputs *in)
{
	size_t i;

	attn_labels_free(&in->query);
	attn_labels_free(&in->key);
	attn_layer_free(&in->layer);
	for (i = 0; i < IN_COUNT; i++)
		attn_array_free(&in->arr[i]);
	for (i = 0; i < VL_COUNT; i++)
		free(in->varlen[i]);
	for (i = 0; i < 3; i++)
		free(in->descale[i]);
	attn_matrix_free(&in->gathered[0]);
	attn_matrix_free(&in->gathered[1]);
	if (in->q_later != NULL)
		attn_npy_later_free(in->q_later);
	memset(in, 0, sizeof *in);
}
