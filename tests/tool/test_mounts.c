/*
 * test_mounts.c - the mount table parser (mounts.c) and the interactive
 * questions (interactive.c).
 *
 * The parser is fed a fixture mountinfo text with escapes, optional fields,
 * an empty source and pseudo filesystems.  The questions run against the real
 * mount table of the machine, which varies: the answers choose "/" by typing
 * it (it is listed on any Linux machine whose root holds files) or row 1,
 * and the checks look at the structure of what is printed, not at the rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "interactive.h"
#include "mounts.h"

/* A stream reading text (a temporary file, so that "" works too). */
static FILE *input(const char *text)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	rewind(f);
	return f;
}

/* How many times needle occurs in hay. */
static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static const char fixture[] =
	"22 27 0:21 / /proc rw,nosuid,relatime shared:5 - proc proc rw\n"
	"23 27 0:22 / /sys rw,relatime shared:6 - sysfs sysfs rw\n"
	"27 1 254:3 / / rw,relatime shared:1 master:2 - ext4 /dev/vda3 rw,errors=remount-ro\n"
	"30 27 8:17 / /media/my\\040disk rw - vfat /dev/sdb1 rw,fmask=0022\n"
	"31 27 8:33 /sub /mnt/t\\011n\\012b\\134 rw - ext4 /dev/sdc1 rw\n"
	"32 27 0:42 / /tmp rw shared:9 - tmpfs tmpfs rw\n"
	"33 27 0:43 / /run rw - tmpfs tmpfs rw,mode=755\n"
	"34 27 7:1 / /snap/core/17 ro - squashfs /dev/loop1 ro\n"
	"35 27 0:44 / /srv/pool rw - zfs tank/data rw\n"
	"36 27 0:45 / /mnt/remote rw - nfs4 server:/export rw\n"
	"37 27 0:46 / /mnt/ssh rw - fuse.sshfs me@host: rw\n"
	"38 33 0:47 / /run/user/1000/doc rw - fuse.portal portal rw\n"
	"39 22 0:48 / /proc/sys/fs/binfmt_misc rw - autofs systemd-1 rw\n"
	"40 27 0:49 / /mnt/empty rw - ramfs  rw\n"
	"41 27 0:50 / /mnt/odd rw - weirdfs somewhere rw\n";

static void test_parse_fixture(void **state)
{
	(void)state;
	FILE *f = input(fixture);
	struct fidx_mount *m;
	size_t n;
	assert_int_equal(fidx_mounts_parse(f, &m, &n), 0);
	fclose(f);
	assert_int_equal(n, 15);

	static const struct {
		const char *target, *source, *fstype;
		bool real;
	} want[] = {
		{"/proc", "proc", "proc", false},
		{"/sys", "sysfs", "sysfs", false},
		{"/", "/dev/vda3", "ext4", true},
		{"/media/my disk", "/dev/sdb1", "vfat", true},
		{"/mnt/t\tn\nb\\", "/dev/sdc1", "ext4", true},
		{"/tmp", "tmpfs", "tmpfs", true},
		{"/run", "tmpfs", "tmpfs", false},
		{"/snap/core/17", "/dev/loop1", "squashfs", false},
		{"/srv/pool", "tank/data", "zfs", true},
		{"/mnt/remote", "server:/export", "nfs4", true},
		{"/mnt/ssh", "me@host:", "fuse.sshfs", true},
		{"/run/user/1000/doc", "portal", "fuse.portal", false},
		{"/proc/sys/fs/binfmt_misc", "systemd-1", "autofs", false},
		{"/mnt/empty", "", "ramfs", false},
		{"/mnt/odd", "somewhere", "weirdfs", false},
	};
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(m[i].target, want[i].target);
		assert_string_equal(m[i].source, want[i].source);
		assert_string_equal(m[i].fstype, want[i].fstype);
		assert_int_equal(m[i].real, want[i].real);
		if (!m[i].real)
			assert_int_equal(m[i].size, 0);
	}
	assert_int_equal(m[2].dev, makedev(254, 3));
	assert_int_equal(m[0].dev, makedev(0, 21));
	/* "/" exists on the test machine: statvfs gave it a size. */
	assert_true(m[2].size > 0);
	assert_true(m[2].used <= m[2].size && m[2].avail <= m[2].size);
	/* "/media/my disk" does not: statvfs failed, the size stays unknown. */
	if (access("/media/my disk", F_OK) != 0)
		assert_int_equal(m[3].size, 0);
	fidx_mounts_free(m, n);
}

static void test_parse_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"garbage\n",
		"22 27 0:21 / /proc rw,relatime shared:5 proc proc rw\n", /* no "-" */
		"22 27 0:21 / /proc rw -\n",                              /* no type */
		"22 27 021 / /proc rw - proc proc rw\n",                  /* no major:minor */
		"22 27 0:21 / proc rw - proc proc rw\n",                  /* relative point */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		FILE *f = input(bad[i]);
		struct fidx_mount *m;
		size_t n;
		errno = 0;
		assert_int_equal(fidx_mounts_parse(f, &m, &n), -1);
		assert_int_equal(errno, EINVAL);
		fclose(f);
	}
}

static void test_parse_empty(void **state)
{
	(void)state;
	FILE *f = input("");
	struct fidx_mount *m;
	size_t n = 1;
	assert_int_equal(fidx_mounts_parse(f, &m, &n), 0);
	assert_int_equal(n, 0);
	fidx_mounts_free(m, n);
	fclose(f);
}

static void test_read_real_table(void **state)
{
	(void)state;
	struct fidx_mount *m;
	size_t n;
	bool root = false;
	assert_int_equal(fidx_mounts_read(&m, &n), 0);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		assert_true(m[i].target[0] == '/');
		root |= strcmp(m[i].target, "/") == 0;
	}
	assert_true(root);
	fidx_mounts_free(m, n);
}

/*
 * Runs fidx_interactive_ask() with answers as input and 3 as the default
 * workers.  Returns its result; *out receives what it printed (malloc'ed).
 */
static int run(const char *answers, struct fidx_interactive_choice *c, char **out)
{
	FILE *in = input(answers);
	size_t len;
	FILE *o = open_memstream(out, &len);
	assert_non_null(o);
	*c = (struct fidx_interactive_choice){0};
	int ret = fidx_interactive_ask(in, o, 3, c);
	fclose(o);
	fclose(in);
	return ret;
}

/* Checks the table that every session starts with. */
static void assert_table(const char *out)
{
	assert_non_null(strstr(out, "Mounted filesystems:\n"));
	assert_non_null(strstr(out, "MOUNT POINT"));
	assert_non_null(strstr(out, "SIZE"));
	assert_non_null(strstr(out, "1  /"));
}

static void test_ask_valid(void **state)
{
	(void)state;
	struct fidx_interactive_choice c;
	char *out;
	assert_int_equal(run("/\n\n\n", &c, &out), 0);
	assert_table(out);
	assert_string_equal(c.root, "/");
	assert_int_equal(c.jobs, 3);
	assert_int_equal(count(out, "Filesystem to scan [1-"), 1);
	assert_int_equal(count(out, "Worker threads [3]: "), 1);
	assert_int_equal(count(out, "Sub-path to scan (blank = all of it): "), 1);
	assert_null(strstr(out, "fidx:"));
	free(c.root);
	free(out);

	/* Row 1 by number, whatever it is; a trailing slash and blanks are fine. */
	assert_int_equal(run(" 1 \n12\n\n", &c, &out), 0);
	assert_true(c.root[0] == '/');
	assert_int_equal(c.jobs, 12);
	free(c.root);
	free(out);
	assert_int_equal(run("//\n1024\n\n", &c, &out), 0);
	assert_string_equal(c.root, "/");
	assert_int_equal(c.jobs, 1024);
	free(c.root);
	free(out);
}

static void test_ask_bad_filesystem(void **state)
{
	(void)state;
	struct fidx_interactive_choice c;
	char *out;
	assert_int_equal(run("0\n99999999999999999999999\n\nabc\n/proc\n/\n4\n\n", &c, &out), 0);
	assert_int_equal(count(out, "Filesystem to scan [1-"), 6);
	assert_non_null(strstr(out, "fidx: '0' is not a number from 1 to "));
	assert_non_null(strstr(out, "fidx: '99999999999999999999999' is not a number from 1 to "));
	assert_non_null(strstr(out, "fidx: type a number from 1 to "));
	assert_non_null(strstr(out, "fidx: 'abc' is neither a number"));
	assert_non_null(strstr(out, "fidx: '/proc' is not the mount point of a listed filesystem"));
	assert_string_equal(c.root, "/");
	assert_int_equal(c.jobs, 4);
	free(c.root);
	free(out);
}

static void test_ask_bad_jobs(void **state)
{
	(void)state;
	struct fidx_interactive_choice c;
	char *out;
	assert_int_equal(run("/\n0\n1025\n-3\nabc\n2x\n7\n\n", &c, &out), 0);
	assert_int_equal(count(out, "Worker threads [3]: "), 6);
	assert_int_equal(count(out, "is not a number of workers from 1 to 1024\n"), 5);
	assert_non_null(strstr(out, "fidx: '1025' is not a number of workers"));
	assert_int_equal(c.jobs, 7);
	free(c.root);
	free(out);
}

static void test_ask_subpath(void **state)
{
	(void)state;
	char dir[] = "/tmp/fidx-test-mounts-XXXXXX", *real, *answers, *fifo, *out;
	struct fidx_interactive_choice c;

	assert_non_null(mkdtemp(dir));
	real = realpath(dir, NULL);
	assert_non_null(real);
	assert_true(asprintf(&fifo, "%s/fifo", real) > 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);

	/* A missing path, then blank: the whole filesystem. */
	assert_int_equal(run("/\n\nno/such/path-fidx\n\n", &c, &out), 0);
	assert_int_equal(count(out, "Sub-path to scan (blank = all of it): "), 2);
	assert_non_null(strstr(out, "fidx: cannot use 'no/such/path-fidx': No such file or directory\n"));
	assert_string_equal(c.root, "/");
	free(c.root);
	free(out);

	/* A FIFO is refused; the folder, relative to "/", is taken, resolved. */
	assert_true(asprintf(&answers, "/\n\n%s\n%s/../%s\n", fifo, real + 1, strrchr(real, '/') + 1) > 0);
	assert_int_equal(run(answers, &c, &out), 0);
	assert_non_null(strstr(out, "is neither a directory nor a regular file\n"));
	assert_string_equal(c.root, real);
	free(c.root);
	free(out);
	free(answers);

	/* An absolute path works as well. */
	assert_true(asprintf(&answers, "/\n\n%s\n", real) > 0);
	assert_int_equal(run(answers, &c, &out), 0);
	assert_string_equal(c.root, real);
	free(c.root);
	free(out);
	free(answers);

	assert_int_equal(unlink(fifo), 0);
	assert_int_equal(rmdir(dir), 0);
	free(fifo);
	free(real);
}

static void test_ask_eof(void **state)
{
	(void)state;
	static const char *const answers[] = {"", "0\n", "/\n", "/\n\n", "/\n\nno/such/path-fidx\n"};
	for (size_t i = 0; i < sizeof(answers) / sizeof(*answers); i++) {
		struct fidx_interactive_choice c;
		char *out;
		assert_int_equal(run(answers[i], &c, &out), -1);
		assert_null(c.root);
		assert_non_null(strstr(out, "\nfidx: no answer, nothing scanned\n"));
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fixture),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_parse_empty),
		cmocka_unit_test(test_read_real_table),
		cmocka_unit_test(test_ask_valid),
		cmocka_unit_test(test_ask_bad_filesystem),
		cmocka_unit_test(test_ask_bad_jobs),
		cmocka_unit_test(test_ask_subpath),
		cmocka_unit_test(test_ask_eof),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
