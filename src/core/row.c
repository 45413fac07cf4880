/*
 * row.c - the column list, and a record as the row it is written as (row.h).
 */
#include "row.h"

#include <string.h>

const struct fidx_column fidx_columns[FIDX_NCOLUMNS] = {
#define FIDX_X(NAME, name, KIND) [FIDX_COL_##NAME] = {#name, FIDX_KIND_##KIND},
	FIDX_FILE_COLUMNS(FIDX_X)
	FIDX_IMAGE_COLUMNS(FIDX_X)
	FIDX_ATTR_COLUMNS(FIDX_X)
	FIDX_LATER_COLUMNS(FIDX_X)
#undef FIDX_X
};

const char *fidx_type_name(char t)
{
	static const char *const names[] = {
#define FIDX_TYPE_WORDS_OF(NAME, letter, words) words,
		FIDX_TYPES(FIDX_TYPE_WORDS_OF)
#undef FIDX_TYPE_WORDS_OF
	};
	const char *at = t ? strchr(FIDX_TYPE_LETTERS, t) : NULL;
	return at ? names[at - FIDX_TYPE_LETTERS] : NULL;
}

unsigned fidx_type_bit(char t)
{
	const char *at = t ? strchr(FIDX_TYPE_LETTERS, t) : NULL;
	return at ? 1u << (at - FIDX_TYPE_LETTERS) : 0;
}

/* Sets column c of row to n bytes at p. */
static inline void put_bytes(struct fidx_row *row, enum fidx_col c, const void *p, size_t n)
{
	row->v[c].p = p;
	row->v[c].n = n;
	row->has |= FIDX_COLUMN(c);
}

/* Sets column c of row to the integer i. */
static inline void put_int(struct fidx_row *row, enum fidx_col c, int64_t i)
{
	row->v[c].i = i;
	row->has |= FIDX_COLUMN(c);
}

/* Sets time column c of row to t. */
static inline void put_time(struct fidx_row *row, enum fidx_col c, struct fidx_time t)
{
	row->v[c].t = t;
	row->has |= FIDX_COLUMN(c);
}

void fidx_row_of_record(const struct fidx_record *rec, struct fidx_row *row)
{
	const struct fidx_meta *m = &rec->meta;

	row->has = 0;
	put_int(row, FIDX_COL_SCAN_ID, rec->scan_id);
	put_bytes(row, FIDX_COL_PATH, rec->path, rec->path_len);
	put_bytes(row, FIDX_COL_NAME, rec->path + rec->name_off, rec->path_len - rec->name_off);
	put_bytes(row, FIDX_COL_EXT, rec->path + rec->ext_off, rec->path_len - rec->ext_off);
	if (rec->type)
		put_bytes(row, FIDX_COL_TYPE, &rec->type, 1);
	if (rec->has_meta) {
		/* uint64 values as int64 (two's complement above INT64_MAX). */
		put_int(row, FIDX_COL_SIZE, (int64_t)m->size);
		put_int(row, FIDX_COL_BLOCKS, (int64_t)m->blocks);
		put_int(row, FIDX_COL_MODE, m->mode);
		put_int(row, FIDX_COL_UID, m->uid);
		put_int(row, FIDX_COL_GID, m->gid);
		put_int(row, FIDX_COL_NLINK, (int64_t)m->nlink);
		put_int(row, FIDX_COL_DEV, (int64_t)m->dev);
		put_int(row, FIDX_COL_INO, (int64_t)m->ino);
		unsigned unknown = rec->image ? rec->image->no_time : 0;
		const struct fidx_time times[4] = {m->atime, m->mtime, m->ctime, m->btime};
		for (int k = 0; k < 4; k++)
			if (!(unknown >> k & 1) && (k < 3 || m->has_btime))
				put_time(row, FIDX_COL_ATIME + k, times[k]);
	}
	if (rec->link_target)
		put_bytes(row, FIDX_COL_LINK_TARGET, rec->link_target, rec->link_len);
	for (int d = 0; d < FIDX_NDIGESTS; d++)
		if (rec->digest_mask & (1u << d))
			put_bytes(row, FIDX_COL_MD5 + d, rec->digest[d], fidx_digest_len(d));
	if (rec->error)
		put_bytes(row, FIDX_COL_ERROR, rec->error, strlen(rec->error));
	if (rec->digests_from)
		put_int(row, FIDX_COL_DIGESTS_FROM, rec->digests_from);
	if (rec->image) {
		const struct fidx_image_meta *im = rec->image;
		if (im->state)
			put_bytes(row, FIDX_COL_STATE, im->state, strlen(im->state));
		if (im->stream)
			put_bytes(row, FIDX_COL_STREAM, im->stream, strlen(im->stream));
		if (im->has_fn_times)
			for (int k = 0; k < 4; k++)
				put_time(row, FIDX_COL_FN_ATIME + k, im->fn_time[k]);
		if (im->has_attributes)
			put_int(row, FIDX_COL_ATTRIBUTES, im->attributes);
	}
}
