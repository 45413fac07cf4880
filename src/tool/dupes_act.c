/*
 * dupes_act.c - `fidx dupes --delete | --link | --reflink` (dupes_act.h).
 *
 * The plan comes first and whole, so that what will happen is on the
 * screen (or in the file stdout goes to) before anything happens: per group
 * its header line as `fidx dupes` prints it, then "keep PATH" and "delete
 * PATH" (or "link", "reflink", "leave" when the group is left alone) for
 * every name of every file, then one line of totals.  The actions follow in
 * the same order: "deleted PATH" (or "linked", "reflinked") on stdout for
 * each name done, "fidx: 'PATH' not deleted: why" on stderr for each name
 * left alone, and a last line of totals.  With --log, each action (done or
 * not) is also a JSON line appended to the log: when, what, the name, the
 * kept copy, size, SHA-256, device and inode, and why not.
 */
#include "dupes_act.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "color.h"
#include "diag.h"
#include "json.h"
#include "output.h"
#include "signals.h"
#include "sysinfo.h"
#include "when.h"

/* The verbs of a plan line and of a line saying it was done. */
static const char *const plan_verb[] = {"delete", "link", "reflink"};
static const char *const done_verb[] = {"deleted", "linked", "reflinked"};

int fidx_dupes_act_check(const struct fidx_query *q)
{
	struct fidx_sysinfo here;
	fidx_sysinfo_read(&here);
	if (q->many_hosts) {
		fidx_error("the selected scans were made on several hosts: choose this machine's"
			   " scans (--scan) to act on duplicates");
		return -1;
	}
	for (size_t i = 0; i < q->nscans; i++) {
		const struct fidx_scan_row *s = fidx_scan_list_find(&q->all, q->ids[i]);
		if (!s)
			continue;
		if (s->opt_image) {
			fidx_error("scan %lld is of a disk image: its files are not files of this"
				   " machine to act on", (long long)s->id);
			return -1;
		}
		if (!fidx_scan_has(s, FIDX_SCOL_HOST) || strcmp(s->host, here.host) != 0) {
			fidx_error("scan %lld was made on host '%s', not on this machine ('%s'):"
				   " its paths do not name files here", (long long)s->id,
				   fidx_scan_has(s, FIDX_SCOL_HOST) ? fidx_quote(s->host) : "?",
				   fidx_quote(here.host));
			return -1;
		}
	}
	return 0;
}

/* Whether time a is later than time b. */
static bool later(struct fidx_time a, struct fidx_time b)
{
	return a.sec > b.sec || (a.sec == b.sec && a.nsec > b.nsec);
}

/* The index of the file g keeps under rule keep, or g->nfiles when none matches a pattern. */
static size_t kept_of(const struct fidx_dupes_group *g, const char *keep)
{
	size_t k = 0;
	if (strcmp(keep, "first") == 0)
		return 0;
	if (strcmp(keep, "newest") == 0 || strcmp(keep, "oldest") == 0) {
		bool newest = keep[0] == 'n';
		for (size_t f = 1; f < g->nfiles; f++)
			if (newest ? later(g->files[f].mtime, g->files[k].mtime)
				   : later(g->files[k].mtime, g->files[f].mtime))
				k = f;
		return k;
	}
	for (size_t f = 0; f < g->nfiles; f++)
		for (size_t p = 0; p < g->files[f].npaths; p++)
			if (fnmatch(keep, g->files[f].paths[p], 0) == 0)
				return f;
	return g->nfiles;
}

/* Prints one line: the word, a space, the path (escaped), the end of the line. */
static void print_line(const char *word, const char *path, bool nul)
{
	fputs(word, stdout);
	putc_unlocked(' ', stdout);
	fidx_color_path(path, 'f', 0, nul);
}

void fidx_dupes_print_header(const struct fidx_dupes_group *g, bool nul)
{
	char each[FIDX_SIZE_TEXT], waste[FIDX_SIZE_TEXT];
	printf("%zu copies of %s (%llu %s each): %s reclaimable (%llu %s), %s ", g->nfiles,
	       fidx_size_text(g->size, false, each), (unsigned long long)g->size,
	       fidx_plural(g->size, "byte", "bytes"), fidx_size_text(g->waste, false, waste),
	       (unsigned long long)g->waste, fidx_plural(g->waste, "byte", "bytes"),
	       fidx_digest_name(g->algo));
	fidx_write_hex(stdout, g->digest, fidx_digest_len(g->algo));
	putc_unlocked(nul ? '\0' : '\n', stdout);
}

/*
 * Whether file f of g is on the device of file k, the one kept.  A copy on
 * another device is left alone: an overlay, NFS or FUSE mount can show the
 * kept file itself under another device.
 */
static bool same_device(const struct fidx_dupes_group *g, size_t k, size_t f)
{
	return g->files[f].dev == g->files[k].dev;
}

/* Prints the plan of group g, keeping file k (g->nfiles: left alone). */
static void print_plan(const struct fidx_dupes_group *g, size_t k, const struct fidx_dupes_act *a)
{
	fidx_dupes_print_header(g, a->nul);
	for (size_t f = 0; f < g->nfiles; f++)
		for (size_t p = 0; p < g->files[f].npaths; p++)
			print_line(k == g->nfiles || (f != k && !same_device(g, k, f)) ? "leave"
				   : f == k ? "keep" : plan_verb[a->how],
				   g->files[f].paths[p], a->nul);
	putc_unlocked(a->nul ? '\0' : '\n', stdout);
}

/* What the actions came to, and where they are logged. */
struct act_state {
	const struct fidx_dupes_act *a;
	const struct fidx_dupes_group *g;
	const struct fidx_dupes_file *kept, *file;
	FILE *log;
	bool log_failed;
	uint64_t names_done, names_left, files_done, bytes_done;
};

/* Appends the JSON line of one action on path (why: NULL when done) to the log. */
static void log_action(struct act_state *s, const char *path, const char *why)
{
	char when[FIDX_WHEN_ISO];
	if (!s->log)
		return;
	fprintf(s->log, "{\"time\":\"%s\",\"action\":\"%s\",",
		fidx_when_iso(fidx_time_of_ns(fidx_now_ns()), when), plan_verb[s->a->how]);
	fidx_json_path(s->log, "path", path);
	putc(',', s->log);
	fidx_json_path(s->log, "kept", s->kept->paths[0]);
	fprintf(s->log, ",\"size\":%llu,\"%s\":", (unsigned long long)s->g->size,
		fidx_digest_name(s->g->algo));
	fidx_json_hex(s->log, s->g->digest, fidx_digest_len(s->g->algo));
	fprintf(s->log, ",\"dev\":%llu,\"ino\":%llu,\"done\":%s", (unsigned long long)s->file->dev,
		(unsigned long long)s->file->ino, why ? "false" : "true");
	if (why) {
		fputs(",\"why\":", s->log);
		fidx_json_string(s->log, why);
	}
	fputs("}\n", s->log);
	if (fflush(s->log) != 0 && !s->log_failed) {
		fidx_error("cannot write log '%s': %s", fidx_quote(s->a->log), strerror(errno));
		s->log_failed = true;
	}
}

/* The report of fidx_dedupe_file(): one name done or left alone. */
static void report(void *arg, const char *path, const struct fidx_error *why)
{
	struct act_state *s = arg;
	if (why) {
		s->names_left++;
		fidx_error("'%s' not %s: %s", fidx_quote(path), done_verb[s->a->how], why->msg);
	} else {
		s->names_done++;
		print_line(done_verb[s->a->how], path, s->a->nul);
	}
	log_action(s, path, why ? why->msg : NULL);
}

/* Leaves every name of the files of g but the kept one (k) alone, for why. */
static void leave_group(struct act_state *s, size_t k, const struct fidx_error *why)
{
	for (size_t f = 0; f < s->g->nfiles; f++) {
		if (f == k || !same_device(s->g, k, f))
			continue; /* the kept one, and those the plan left alone */
		s->file = &s->g->files[f];
		for (size_t p = 0; p < s->file->npaths; p++)
			report(s, s->file->paths[p], why);
	}
}

/* Carries out the plan for group g, keeping file k.  Returns false when interrupted. */
static bool act_on_group(struct act_state *s, const struct fidx_dupes_group *g, size_t k)
{
	struct fidx_dedupe_keep keep;
	struct fidx_error err;
	s->g = g;
	s->kept = &g->files[k];
	if (fidx_dedupe_keep_open(&keep, s->kept, g->size, &err) < 0) {
		struct fidx_error why;
		fidx_fail(&why, err.code, "the kept copy '%s': %s", fidx_quote(s->kept->paths[0]),
			  err.msg);
		leave_group(s, k, &why);
		return true;
	}
	for (size_t f = 0; f < g->nfiles; f++) {
		if (f == k)
			continue;
		if (atomic_load(&fidx_interrupted)) {
			fidx_dedupe_keep_close(&keep);
			return false;
		}
		if (!same_device(g, k, f))
			continue; /* left alone in the plan */
		s->file = &g->files[f];
		uint64_t others;
		size_t done = fidx_dedupe_file(&keep, s->file, s->a->how, report, s, &others);
		if (done == s->file->npaths) {
			s->files_done++;
			if (!others)
				s->bytes_done += g->size;
			else
				fidx_warn("'%s' has %llu more %s the scans did not record: its bytes stay",
					  fidx_quote(s->file->paths[0]), (unsigned long long)others,
					  fidx_plural(others, "name", "names"));
		}
	}
	fidx_dedupe_keep_close(&keep);
	return true;
}

/* Prints a total line: "WHAT N files (M names), SIZE (BYTES bytes)SUFFIX". */
static void print_total(const char *what, uint64_t files, uint64_t names, uint64_t bytes,
			const char *suffix, bool nul)
{
	char size[FIDX_SIZE_TEXT];
	printf("%s %llu %s (%llu %s), %s (%llu %s)%s", what, (unsigned long long)files,
	       fidx_plural(files, "file", "files"), (unsigned long long)names,
	       fidx_plural(names, "name", "names"), fidx_size_text(bytes, false, size),
	       (unsigned long long)bytes, fidx_plural(bytes, "byte", "bytes"), suffix);
	putc_unlocked(nul ? '\0' : '\n', stdout);
}

int fidx_dupes_act_run(const struct fidx_dupes *d, const struct fidx_dupes_act *a)
{
	struct act_state s = {.a = a};
	uint64_t plan_files = 0, plan_names = 0, plan_bytes = 0, groups_left = 0, elsewhere = 0;
	size_t *kept = calloc(d->ngroups ? d->ngroups : 1, sizeof(*kept));
	int status = 0;

	if (!kept) {
		fidx_error("out of memory");
		return 2;
	}
	fidx_out_begin();
	for (size_t i = 0; i < d->ngroups; i++) {
		const struct fidx_dupes_group *g = &d->groups[i];
		kept[i] = kept_of(g, a->keep);
		print_plan(g, kept[i], a);
		if (kept[i] == g->nfiles) {
			groups_left++;
			continue;
		}
		for (size_t f = 0; f < g->nfiles; f++) {
			if (f == kept[i])
				continue;
			if (!same_device(g, kept[i], f)) {
				elsewhere++;
				continue;
			}
			plan_names += g->files[f].npaths;
			plan_files++;
			plan_bytes += g->size;
		}
	}
	char suffix[96] = "";
	if (groups_left)
		snprintf(suffix, sizeof(suffix), "; %llu %s left alone (no file matches --keep)",
			 (unsigned long long)groups_left, fidx_plural(groups_left, "group", "groups"));
	char what[32];
	snprintf(what, sizeof(what), "plan: %s", plan_verb[a->how]);
	print_total(what, plan_files, plan_names, plan_bytes, suffix, a->nul);
	if (groups_left)
		fidx_warn("%llu %s of duplicates left alone: no file matches --keep '%s'",
			  (unsigned long long)groups_left, fidx_plural(groups_left, "group", "groups"),
			  fidx_quote(a->keep));
	if (elsewhere)
		fidx_warn("%llu %s on another file system than the kept one left alone (an overlay,"
			  " NFS or FUSE mount can show the very same file under another device)",
			  (unsigned long long)elsewhere, fidx_plural(elsewhere, "copy", "copies"));
	if (fidx_out_end() < 0) {
		free(kept);
		return 2;
	}
	if (a->dry_run || !d->ngroups) {
		free(kept);
		return !d->ngroups ? 1 : groups_left || elsewhere ? 3 : 0;
	}
	if (a->log) {
		int fd = open(a->log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || !(s.log = fdopen(fd, "a"))) {
			fidx_error("cannot open log '%s': %s", fidx_quote(a->log), strerror(errno));
			if (fd >= 0)
				close(fd);
			free(kept);
			return 2;
		}
	}
	putc_unlocked(a->nul ? '\0' : '\n', stdout);
	bool whole = true;
	for (size_t i = 0; i < d->ngroups && whole; i++)
		if (kept[i] != d->groups[i].nfiles)
			whole = act_on_group(&s, &d->groups[i], kept[i]);
	snprintf(suffix, sizeof(suffix), "%s%llu %s left alone%s",
		 a->how == FIDX_DEDUPE_REFLINK ? " shared; " : " reclaimed; ",
		 (unsigned long long)s.names_left, fidx_plural(s.names_left, "name", "names"),
		 whole ? "" : "; interrupted");
	print_total(done_verb[a->how], s.files_done, s.names_done, s.bytes_done, suffix, a->nul);
	if (fidx_out_end() < 0)
		status = 2;
	if (s.log && (fsync(fileno(s.log)) != 0 || fclose(s.log) != 0) && !s.log_failed) {
		fidx_error("cannot write log '%s': %s", fidx_quote(a->log), strerror(errno));
		s.log_failed = true;
	}
	free(kept);
	if (status)
		return status;
	return !whole ? 130 : s.log_failed ? 2 : s.names_left || groups_left || elsewhere ? 3 : 0;
}
