/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clockd/pagefile.h"
#include "clockd/safepath.h"
#include "shared/latch.h"
#include "shared/log.h"

_Static_assert(sizeof(pthread_mutex_t) <= sizeof(((struct clockd_page *)0)->writer_lock),
	       "the writer lock must fit its slot in the page");
#ifdef __GLIBC__
/* Readers look at the futex word only: glibc keeps it first. */
_Static_assert(offsetof(pthread_mutex_t, __data.__lock) == 0, "glibc mutex futex word at offset 0");
#endif

static pthread_mutex_t *writer_lock(struct clockd_page *pg)
{
	return (pthread_mutex_t *)(void *)pg->writer_lock;
}

static void read_boot_id(uint8_t id[16])
{
	char buf[64];
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	int n = 0;

	memset(id, 0, 16);
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		for (char *p = buf; *p && n < 32; p++) {
			int v;

			if (*p >= '0' && *p <= '9') v = *p - '0';
			else if (*p >= 'a' && *p <= 'f') v = *p - 'a' + 10;
			else continue;
			id[n / 2] = (uint8_t)(id[n / 2] | (v << ((n % 2) ? 0 : 4)));
			n++;
		}
	}
	fclose(f);
}

static int map_fd(struct pagefile *pf)
{
	void *m = mmap(NULL, CLOCKD_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, pf->fd, 0);

	if (m == MAP_FAILED) {
		log_warn("%s: mmap", pf->path);
		return -1;
	}
	pf->pg = m;
	return 0;
}

static int lock_fd(struct pagefile *pf)
{
	if (flock(pf->fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		log_warnx("%s: another clockd is running on this page", pf->path);
	else
		log_warn("%s: flock", pf->path);
	return -1;
}

static int open_existing(struct pagefile *pf)
{
	struct stat st;

	pf->fd = openat(pf->dirfd, pf->base, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (pf->fd < 0) {
		if (errno == ELOOP)
			log_warnx("%s: is a symbolic link; refusing to follow it", pf->path);
		else if (errno != ENOENT)
			log_warn("%s: open", pf->path);
		return -1;
	}
	if (fstat(pf->fd, &st) < 0) {
		log_warn("%s: fstat", pf->path);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		log_warnx("%s: not a regular file with one link; refusing it", pf->path);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		log_warnx("%s: owned by uid %u or writable by others (mode %03o); refusing it",
			  pf->path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		return -1;
	}
	if (st.st_size != CLOCKD_PAGE_SIZE) {
		log_warnx("%s: size %lld is not a clockd page's (%u); remove it to start afresh",
			  pf->path, (long long)st.st_size, CLOCKD_PAGE_SIZE);
		return -1;
	}
	if (lock_fd(pf) < 0 || map_fd(pf) < 0)
		return -1;
	if (pf->pg->magic != CLOCKD_PAGE_MAGIC || pf->pg->abi_version != CLOCKD_PAGE_ABI ||
	    pf->pg->size != CLOCKD_PAGE_SIZE) {
		log_warnx("%s: not a clockd page of ABI %u (magic %#x, ABI %u); remove it to start afresh",
			  pf->path, CLOCKD_PAGE_ABI, pf->pg->magic, pf->pg->abi_version);
		return -1;
	}
	pf->reused = true;
	latch_snapshot(pf->pg, &pf->prev);
	memcpy(&pf->prev_header, pf->pg, offsetof(struct clockd_page, seq));
	pf->same_boot = memcmp(pf->prev_header.boot_id, pf->boot_id, 16) == 0;
	return 0;
}

/* Create, initialise and rename into place. 1 if the path appeared
 * meanwhile (open it instead), 0 done, -1 error. */
static int create_new(struct pagefile *pf)
{
	char tmp[272];
	int r;

	pf->fd = safepath_mktemp(pf->dirfd, pf->base, tmp, sizeof(tmp));
	if (pf->fd < 0) {
		log_warn("%s: cannot create a file beside it", pf->path);
		return -1;
	}
	if (fchmod(pf->fd, 0644) < 0) {
		log_warn("%s: cannot set the page's mode", tmp);
		goto err_unlink;
	}
	/* The page's blocks now, not at the first store through the map: a
	 * full or quota-bound directory is this one error, not a SIGBUS
	 * while writing the page (ftruncate would leave a sparse file). */
	r = posix_fallocate(pf->fd, 0, CLOCKD_PAGE_SIZE);
	if (r != 0) {
		errno = r;
		log_warn("%s: cannot reserve the page's %u bytes in its directory", pf->path,
			 CLOCKD_PAGE_SIZE);
		goto err_unlink;
	}
	if (lock_fd(pf) < 0 || map_fd(pf) < 0)
		goto err_unlink;
	pf->pg->magic = CLOCKD_PAGE_MAGIC;
	pf->pg->abi_version = CLOCKD_PAGE_ABI;
	pf->pg->size = CLOCKD_PAGE_SIZE;
	r = renameat2(pf->dirfd, tmp, pf->dirfd, pf->base, RENAME_NOREPLACE);
	if (r == 0)
		return 0;
	if (errno == EEXIST) {
		unlinkat(pf->dirfd, tmp, 0);
		munmap(pf->pg, CLOCKD_PAGE_SIZE);
		pf->pg = NULL;
		close(pf->fd);
		pf->fd = -1;
		return 1;
	}
	log_warn("%s: cannot rename into place", pf->path);
err_unlink:
	unlinkat(pf->dirfd, tmp, 0);
	return -1;
}

int pagefile_set_access(struct pagefile *pf, mode_t mode, gid_t gid)
{
	if (gid != (gid_t)-1 && fchown(pf->fd, (uid_t)-1, gid) < 0) {
		log_warn("%s: cannot give the page to group %lu", pf->path, (unsigned long)gid);
		return -1;
	}
	if (fchmod(pf->fd, (mode & 0044) | 0600) < 0) {
		log_warn("%s: cannot set the page's mode to %03o", pf->path, (unsigned)((mode & 0044) | 0600));
		return -1;
	}
	return 0;
}

int pagefile_open(struct pagefile *pf, const char *path)
{
	int r;

	memset(pf, 0, sizeof(*pf));
	pf->fd = -1;
	pf->dirfd = -1;
	snprintf(pf->path, sizeof(pf->path), "%s", path);
	read_boot_id(pf->boot_id);
	pf->dirfd = safepath_dir("page", path, pf->base, sizeof(pf->base));
	if (pf->dirfd < 0)
		return -1;
	for (int tries = 0; tries < 3; tries++) {
		if (open_existing(pf) == 0)
			return 0;
		if (pf->fd >= 0 || errno != ENOENT)
			goto err_close;
		r = create_new(pf);
		if (r == 0)
			return 0;
		if (r < 0)
			goto err_close;
	}
	log_warnx("%s: the page keeps appearing and vanishing; giving up", path);
err_close:
	pagefile_close(pf);
	return -1;
}

int pagefile_take(struct pagefile *pf)
{
	pthread_mutexattr_t attr;
	int r;

	/* The previous owner, if any, is dead (we hold the flock), so the
	 * mutex is re-initialised rather than recovered. */
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	r = pthread_mutex_init(writer_lock(pf->pg), &attr);
	pthread_mutexattr_destroy(&attr);
	if (r == 0)
		r = pthread_mutex_lock(writer_lock(pf->pg));
	if (r != 0) {
		errno = r;
		log_warn("%s: cannot take the writer lock", pf->path);
		return -1;
	}
	/* The alarm is the previous owner's verdict on its own source or tick,
	 * not ours: left set, it would fail every read with ESTALE for as long
	 * as we run. */
	__atomic_store_n(&pf->pg->alarm, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&pf->pg->flags, CLOCKD_PAGE_RUNNING, __ATOMIC_RELEASE);
	return 0;
}

void pagefile_release(struct pagefile *pf)
{
	if (!pf->pg)
		return;
	__atomic_store_n(&pf->pg->flags, CLOCKD_PAGE_STOPPING, __ATOMIC_RELEASE);
	pthread_mutex_unlock(writer_lock(pf->pg));
}

void pagefile_close(struct pagefile *pf)
{
	if (pf->pg)
		munmap(pf->pg, CLOCKD_PAGE_SIZE);
	if (pf->fd >= 0)
		close(pf->fd);
	if (pf->dirfd >= 0)
		close(pf->dirfd);
	pf->pg = NULL;
	pf->fd = -1;
	pf->dirfd = -1;
}

void pagefile_publish(struct pagefile *pf, const struct clockd_page_data *d, const void *tag)
{
	latch_publish_tagged(pf->pg, d, pf->tag, tag);
}

const struct clockd_page_data *pagefile_read_begin(const struct pagefile *pf, uint32_t *seq, const void **tag)
{
	const struct clockd_page_data *copy = clockd_page_read_begin(pf->pg, seq);

	*tag = LOAD_RELAXED(&pf->tag[copy - pf->pg->data]);
	return copy;
}

bool pagefile_read_retry(const struct pagefile *pf, uint32_t seq)
{
	return clockd_page_read_retry(pf->pg, seq);
}

/* A NUL-terminated copy of @s into the field @dst of @size bytes, one
 * relaxed atomic store a byte (readers copy these while we run). */
static void store_name(char *dst, size_t size, const char *s)
{
	size_t n = s ? strnlen(s, size - 1) : 0;

	for (size_t i = 0; i < size; i++)
		STORE_RELAXED(&dst[i], i < n ? s[i] : '\0');
}

void pagefile_set_epoch(struct pagefile *pf, uint64_t generation, uint64_t initial_jiffies)
{
	STORE_RELAXED(&pf->pg->generation, generation);
	STORE_RELAXED(&pf->pg->initial_jiffies, initial_jiffies);
	for (size_t i = 0; i < sizeof(pf->boot_id); i++)
		STORE_RELAXED(&pf->pg->boot_id[i], pf->boot_id[i]);
	STORE_RELAXED(&pf->pg->pid, (uint32_t)getpid());
}

void pagefile_set_rate(struct pagefile *pf, uint32_t hz, uint32_t tick_ns, uint64_t stale_ns)
{
	STORE_RELAXED(&pf->pg->hz, hz);
	STORE_RELAXED(&pf->pg->tick_ns, tick_ns);
	STORE_RELAXED(&pf->pg->stale_ns, stale_ns);
}

void pagefile_set_extrapolate(struct pagefile *pf, uint64_t extrapolate_ns)
{
	STORE_RELAXED(&pf->pg->extrapolate_ns, extrapolate_ns);
}

void pagefile_set_start(struct pagefile *pf, int64_t start_mono_ns)
{
	STORE_RELAXED(&pf->pg->start_mono_ns, start_mono_ns);
}

void pagefile_set_jiffies_epoch(struct pagefile *pf, uint64_t jiffies_base, int64_t epoch_ns)
{
	STORE_RELAXED(&pf->pg->jiffies_base, jiffies_base);
	STORE_RELAXED(&pf->pg->jiffies_epoch_ns, epoch_ns);
}

void pagefile_set_source(struct pagefile *pf, const char *name, const char *vclock_path)
{
	store_name(pf->pg->source, sizeof(pf->pg->source), name);
	store_name(pf->pg->vclock_path, sizeof(pf->pg->vclock_path), vclock_path);
}

void pagefile_set_tick(struct pagefile *pf, const char *name)
{
	store_name(pf->pg->tick, sizeof(pf->pg->tick), name);
}

uint32_t pagefile_alarm_raise(struct pagefile *pf, uint32_t bits)
{
	return __atomic_fetch_or(&pf->pg->alarm, bits, __ATOMIC_RELEASE);
}

uint32_t pagefile_alarm_clear(struct pagefile *pf, uint32_t bits)
{
	return __atomic_fetch_and(&pf->pg->alarm, ~bits, __ATOMIC_RELEASE);
}

uint32_t pagefile_alarm(const struct pagefile *pf)
{
	return __atomic_load_n(&pf->pg->alarm, __ATOMIC_ACQUIRE);
}

uint32_t pagefile_flags_set(struct pagefile *pf, uint32_t bits)
{
	return __atomic_fetch_or(&pf->pg->flags, bits, __ATOMIC_RELEASE);
}

uint32_t pagefile_flags_clear(struct pagefile *pf, uint32_t bits)
{
	return __atomic_fetch_and(&pf->pg->flags, ~bits, __ATOMIC_RELEASE);
}

void pagefile_set_ndevices(struct pagefile *pf, unsigned n)
{
	static const struct clockd_page_device none;

	if (n > CLOCKD_PAGE_MAX_DEVICES)
		n = CLOCKD_PAGE_MAX_DEVICES;
	STORE_RELAXED(&pf->pg->ndevices, n);
	for (unsigned i = n; i < CLOCKD_PAGE_MAX_DEVICES; i++)
		pagefile_set_device(pf, i, &none);
}

void pagefile_set_device(struct pagefile *pf, unsigned i, const struct clockd_page_device *e)
{
	uint32_t s;

	_Static_assert(sizeof(*e) % 8 == 0, "device entries are copied in 64-bit words");
	if (i >= CLOCKD_PAGE_MAX_DEVICES)
		return;
	s = seqcount_write_begin(&pf->pg->dev_seq);
	latch_store_words(&pf->pg->devices[i], e, sizeof(*e) / 8);
	seqcount_write_end(&pf->pg->dev_seq, s);
}
