/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An allocation failure injector for tests (tests/stress/oom.sh): preloaded
 * into a process (LD_PRELOAD), it wraps malloc, calloc, realloc and the
 * aligned allocators around glibc's own (__libc_malloc and friends: no
 * dlsym, so no allocation before we can allocate) and makes them fail
 * with ENOMEM while the control file says so (failalloc.h): every call in
 * mode 1, every Nth in mode N. free() is glibc's, untouched.
 *
 * The control file is mapped once, in a constructor, while the process is
 * still single-threaded; without $FAILALLOC_CTL, or with a file that is
 * not one, every call passes through. The counters are atomics: the
 * daemon allocates from several threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/stress/failalloc.h"

/* glibc's allocator under its other names (exported, not declared). */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

/* The build hides symbols by default; these must interpose. */
#define EXPORT __attribute__((visibility("default")))

static struct failalloc_ctl *ctl;

__attribute__((constructor)) static void failalloc_init(void)
{
	const char *path = getenv("FAILALLOC_CTL");
	struct stat st;
	void *m;
	int fd;

	if (!path)
		return;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(*ctl)) {
		m = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED && ((struct failalloc_ctl *)m)->magic == FAILALLOC_MAGIC)
			ctl = m;
	}
	close(fd);
}

/* Whether this allocation is to fail (then errno is ENOMEM). */
static int inject(void)
{
	uint32_t mode;
	uint64_t n;

	if (!ctl)
		return 0;
	mode = __atomic_load_n(&ctl->mode, __ATOMIC_RELAXED);
	if (mode == 0)
		return 0;
	n = __atomic_add_fetch(&ctl->calls, 1, __ATOMIC_RELAXED);
	if (mode > 1 && n % mode != 0)
		return 0;
	__atomic_add_fetch(&ctl->failed, 1, __ATOMIC_RELAXED);
	errno = ENOMEM;
	return 1;
}

EXPORT void *malloc(size_t size)
{
	return inject() ? NULL : __libc_malloc(size);
}

EXPORT void *calloc(size_t n, size_t size)
{
	return inject() ? NULL : __libc_calloc(n, size);
}

/* realloc(p, 0) frees: that never fails. */
EXPORT void *realloc(void *p, size_t size)
{
	if (size && inject())
		return NULL;
	return __libc_realloc(p, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
	return inject() ? NULL : __libc_memalign(align, size);
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return inject() ? NULL : __libc_memalign(align, size);
}

/* Returns its error and leaves errno alone, as glibc's does. */
EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int saved = errno, fail;
	void *p = NULL;

	if (align < sizeof(void *) || (align & (align - 1)) != 0)
		return EINVAL;
	fail = inject();
	if (!fail)
		p = __libc_memalign(align, size);
	errno = saved;
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

EXPORT void *valloc(size_t size)
{
	return inject() ? NULL : __libc_valloc(size);
}

EXPORT void *pvalloc(size_t size)
{
	return inject() ? NULL : __libc_pvalloc(size);
}
