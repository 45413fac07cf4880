/*
 * record.c - the inventory entry: type letters, ownership (its digests' names
 * are hash.c's).
 */
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char fidx_type_of_mode(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return 'f';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	default: return 0;
	}
}

int fidx_record_set_error(struct fidx_record *rec, const char *op, int errnum)
{
	char *msg;
	int n = errnum ? asprintf(&msg, "%s: %s", op, strerror(errnum))
		       : asprintf(&msg, "%s", op);
	if (n < 0) {
		errno = ENOMEM;
		return -1;
	}
	free(rec->error);
	rec->error = msg;
	return 0;
}

size_t fidx_ext_offset(const char *path, size_t name_off, size_t path_len)
{
	const char *name = path + name_off;
	size_t i = 0;
	while (name[i] == '.')
		i++;
	const char *dot = memrchr(name + i, '.', path_len - name_off - i);
	return dot ? (size_t)(dot + 1 - path) : path_len;
}

void fidx_record_free(struct fidx_record *rec)
{
	if (!rec)
		return;
	free(rec->path);
	free(rec->link_target);
	free(rec->error);
	if (rec->image)
		free(rec->image->stream);
	free(rec->image);
	free(rec);
}
