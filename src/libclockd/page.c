/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Finding and mapping the time page. A mapping is never unmapped: another
 * thread may be reading it at any moment, and a page is small. A page whose
 * file was replaced (its daemon gone, a new file at the path) is superseded
 * by a mapping of the new file; the old one stays mapped, unused.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libclockd/internal.h"
#include "shared/tickmath.h"
#include "shared/timens.h"

const struct clockd_page *lib_page_ptr;
/* The kernel-clock fallback (clockd_set_fallback()): $CLOCKD_FALLBACK,
 * read with the page's path. */
int lib_fallback;
int64_t lib_timens_mono, lib_timens_boot;

static pthread_mutex_t page_lock = PTHREAD_MUTEX_INITIALIZER;
static char page_path[256];
static bool page_path_set;
static int page_path_errno; /* $CLOCKD_SHM unusable */
static int64_t page_next_try;  /* kernel CLOCK_MONOTONIC_COARSE, ns */
static int page_last_errno;
static dev_t page_dev;
static ino_t page_ino;

/*
 * page_lock is taken with every signal blocked: a signal handler may read
 * a clock (clock_gettime is async-signal-safe), and a read that finds the
 * daemon gone comes here; had the handler interrupted its own thread
 * holding the lock, it would wait for ever.
 */
static void page_lock_take(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	pthread_mutex_lock(&page_lock);
}

static void page_lock_drop(const sigset_t *old)
{
	pthread_mutex_unlock(&page_lock);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static int64_t coarse_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Also the fork child's handler: a child of a process that unshared
 * CLONE_NEWTIME lives in the new namespace. */
static void timens_load(void)
{
	struct timens_offsets o;

	(void)timens_read(&o); /* an unreadable file: no offsets (zeros) */
	__atomic_store_n(&lib_timens_boot, o.boot_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&lib_timens_mono, o.mono_ns, __ATOMIC_RELAXED);
}

int64_t lib_timens_kernel(clockid_t id)
{
	struct timens_offsets o = { lib_timens_mono_ns(), __atomic_load_n(&lib_timens_boot, __ATOMIC_RELAXED) };

	return timens_offset_of(&o, id);
}

int64_t lib_host_kmono(void)
{
	return kclock_ns(CLOCK_MONOTONIC) - lib_timens_mono_ns();
}

static void page_path_init(void)
{
	const char *env = getenv("CLOCKD_SHM");
	const char *fb = getenv("CLOCKD_FALLBACK");

	if (!env || !*env)
		env = CLOCKD_DEFAULT_PAGE;
	if (strlen(env) >= sizeof(page_path))
		page_path_errno = ENAMETOOLONG;
	else
		strcpy(page_path, env);
	if (fb && strcmp(fb, "kernel") == 0)
		__atomic_store_n(&lib_fallback, 1, __ATOMIC_RELAXED);
	/* Before any page is published (the release store of lib_page_ptr
	 * orders it for readers). */
	timens_load();
	pthread_atfork(NULL, NULL, timens_load);
	__atomic_store_n(&page_path_set, true, __ATOMIC_RELEASE);
}

const char *lib_page_path(void)
{
	sigset_t old;

	if (__atomic_load_n(&page_path_set, __ATOMIC_ACQUIRE))
		return page_path;
	page_lock_take(&old);
	if (!page_path_set)
		page_path_init();
	page_lock_drop(&old);
	return page_path;
}

/*
 * Map and validate the file at page_path. Returns the page or NULL with
 * errno set. A reader must not be turned by whoever could put a file
 * there: O_NONBLOCK, so a FIFO neither hangs the open nor the caller, and
 * only a regular file of exactly CLOCKD_PAGE_SIZE bytes is mapped (an
 * empty or short file would kill the reader with SIGBUS; a device could
 * map anything). Anything else is EPROTO, as a page with the wrong magic.
 */
static const struct clockd_page *page_map(struct stat *st)
{
	const struct clockd_page *pg;
	void *map;
	int fd, err;

	fd = open(page_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, st) < 0) {
		err = errno;
		goto err_close;
	}
	if (!S_ISREG(st->st_mode) || st->st_size != (off_t)CLOCKD_PAGE_SIZE) {
		err = EPROTO;
		goto err_close;
	}
	map = mmap(NULL, CLOCKD_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto err_close;
	}
	close(fd);
	pg = map;
	if (pg->magic != CLOCKD_PAGE_MAGIC || pg->abi_version != CLOCKD_PAGE_ABI ||
	    pg->size != CLOCKD_PAGE_SIZE) {
		munmap(map, CLOCKD_PAGE_SIZE);
		errno = EPROTO;
		return NULL;
	}
	return pg;

err_close:
	close(fd);
	errno = err;
	return NULL;
}

/* Make @pg, mapped from the file @st describes, the page every read uses.
 * Called with page_lock held. */
static void page_install(const struct clockd_page *pg, const struct stat *st)
{
	page_dev = st->st_dev;
	page_ino = st->st_ino;
	__atomic_store_n(&lib_page_ptr, pg, __ATOMIC_RELEASE);
}

const struct clockd_page *lib_page_open_slow(int *err)
{
	const struct clockd_page *pg;
	struct stat st;
	sigset_t old;
	int saved = errno;
	int64_t now;

	page_lock_take(&old);
	if (!page_path_set)
		page_path_init();
	pg = __atomic_load_n(&lib_page_ptr, __ATOMIC_ACQUIRE);
	if (pg)
		goto out;
	if (page_path_errno) {
		*err = page_path_errno;
		goto out;
	}
	now = coarse_now();
	if (page_next_try && now < page_next_try) {
		*err = page_last_errno;
		goto out;
	}
	pg = page_map(&st);
	if (!pg) {
		*err = page_last_errno = errno;
		__atomic_store_n(&page_next_try, now + PAGE_RETRY_NS, __ATOMIC_RELAXED);
		goto out;
	}
	page_install(pg, &st);
out:
	page_lock_drop(&old);
	errno = saved;
	return pg;
}

void lib_page_gone(void)
{
	const struct clockd_page *pg;
	struct stat st;
	int64_t now = coarse_now();
	int saved = errno;
	sigset_t old;

	/* Looked at once per PAGE_RETRY_NS: a failing read stays cheap. */
	if (now < __atomic_load_n(&page_next_try, __ATOMIC_RELAXED))
		return;
	page_lock_take(&old);
	if (now < page_next_try)
		goto out;
	__atomic_store_n(&page_next_try, now + PAGE_RETRY_NS, __ATOMIC_RELAXED);
	if (page_path_errno || stat(page_path, &st) < 0 ||
	    (st.st_dev == page_dev && st.st_ino == page_ino))
		goto out;
	pg = page_map(&st);
	if (pg)
		page_install(pg, &st);
out:
	page_lock_drop(&old);
	errno = saved;
}

/*
 * For the page fuzzer (tests/fuzz/page-fuzz.c), not exported: unmap the
 * page and forget every cached result, so that the next read maps the file
 * afresh. Only for a single-threaded caller: a reader in another thread
 * would fault on the unmapped page.
 */
void lib_page_forget(void);
void lib_page_forget(void)
{
	const struct clockd_page *pg;

	pthread_mutex_lock(&page_lock);
	pg = __atomic_exchange_n(&lib_page_ptr, NULL, __ATOMIC_ACQ_REL);
	if (pg)
		munmap((void *)(uintptr_t)pg, CLOCKD_PAGE_SIZE);
	__atomic_store_n(&page_next_try, 0, __ATOMIC_RELAXED);
	page_last_errno = 0;
	page_dev = 0;
	page_ino = 0;
	pthread_mutex_unlock(&page_lock);
}
