/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Path hygiene (see safepath.h). The walk opens "/" and then each
 * component with O_NOFOLLOW, so what is checked is what is used: a
 * directory renamed or replaced by a link after the check is not the one
 * the descriptor holds, and one replaced before it fails the walk.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clockd/safepath.h"
#include "shared/log.h"

static uid_t trusted_uid = (uid_t)-1;

void safepath_trust(uid_t uid)
{
	trusted_uid = uid;
}

static bool owner_ok(uid_t uid)
{
	return uid == 0 || uid == geteuid() || (trusted_uid != (uid_t)-1 && uid == trusted_uid);
}

/* A directory nobody but root or the daemon's user may change: owned by
 * one of them, and writable by group or others only when sticky (there a
 * user may remove or rename only what is its own). */
static int check_dir(const char *what, const char *dir, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		log_warn("%s: directory %s: fstat", what, dir);
		return -1;
	}
	if (owner_ok(st.st_uid) && (!(st.st_mode & (S_IWGRP | S_IWOTH)) || (st.st_mode & S_ISVTX)))
		return 0;
	log_warnx("%s: directory %s has owner uid %lu and mode %04o: only root or the daemon's user "
		  "may own the directories above it, and group or others may write them only with the "
		  "sticky bit; refusing it", what, dir, (unsigned long)st.st_uid,
		  (unsigned)(st.st_mode & 07777));
	return -1;
}

/* Open the resolved absolute directory @dir from "/", each component
 * without following links and checked; with @create, a missing last one
 * is made. The descriptor or -1 (logged). */
static int walk(const char *what, const char *dir, bool create)
{
	char buf[PATH_MAX], sofar[PATH_MAX] = "", *save = NULL, *comp, *next;
	int fd = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC), nfd;

	if (fd < 0 || check_dir(what, "/", fd) < 0)
		goto err_close;
	snprintf(buf, sizeof(buf), "%s", dir);
	for (comp = strtok_r(buf, "/", &save); comp; comp = next) {
		next = strtok_r(NULL, "/", &save);
		snprintf(sofar + strlen(sofar), sizeof(sofar) - strlen(sofar), "/%s", comp);
		nfd = openat(fd, comp, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create && !next) {
			if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
				log_warn("%s: cannot create the directory %s", what, sofar);
				goto err_close;
			}
			nfd = openat(fd, comp, O_DIRECTORY | O_NOFOLLOW | O_RDONLY | O_CLOEXEC);
		}
		if (nfd < 0) {
			if (errno == ELOOP || errno == ENOTDIR)
				log_warnx("%s: %s changed into a symbolic link or a file while it was checked; "
					  "refusing it", what, sofar);
			else
				log_warn("%s: directory %s", what, sofar);
			goto err_close;
		}
		close(fd);
		fd = nfd;
		if (check_dir(what, sofar, fd) < 0)
			goto err_close;
	}
	return fd;
err_close:
	if (fd >= 0)
		close(fd);
	return -1;
}

int safepath_dir(const char *what, const char *path, char *base, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX], *slash;
	bool create = false;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || !slash[1] || strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0 ||
	    strlen(slash + 1) >= len) {
		log_warnx("%s: %s: not an absolute path to a file", what, path);
		return -1;
	}
	snprintf(base, len, "%s", slash + 1);
	if (slash == dir)
		slash[1] = '\0'; /* the file is in "/" */
	else
		*slash = '\0';
	/* Links are resolved once, here; the walk then follows none. A
	 * missing directory is made in its (resolved) parent. */
	if (!realpath(dir, real)) {
		char *last = strrchr(dir, '/');

		if (errno != ENOENT || last == dir) {
			log_warn("%s: directory %s", what, dir);
			return -1;
		}
		*last = '\0';
		if (!realpath(dir, real) || strlen(real) + strlen(last + 1) + 2 > sizeof(real)) {
			log_warn("%s: directory %s", what, dir);
			return -1;
		}
		snprintf(real + strlen(real), sizeof(real) - strlen(real), "%s%s",
			 strcmp(real, "/") == 0 ? "" : "/", last + 1);
		create = true;
	}
	return walk(what, real, create);
}

int safepath_mktemp(int dirfd, const char *base, char *tmp, size_t len)
{
	for (int tries = 0; tries < 100; tries++) {
		uint32_t r;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = (uint32_t)rand();
		if ((size_t)snprintf(tmp, len, "%s.%08x", base, r) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int safepath_sockaddr(int dirfd, const char *base, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", dirfd, base) >=
	    sizeof(sa->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int safepath_check_socket(int dirfd, const char *base, const char *path, gid_t gid, mode_t mode)
{
	struct stat st;

	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		log_warn("control_socket: %s: gone after bind", path);
		return -1;
	}
	if (S_ISSOCK(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1 &&
	    (gid == (gid_t)-1 || st.st_gid == gid) && (st.st_mode & 07777) == mode)
		return 0;
	log_warnx("control_socket: %s is not the socket just bound (type %o, owner uid %lu gid %lu, "
		  "mode %04o, %lu links); refusing it", path, (unsigned)(st.st_mode & S_IFMT) >> 12,
		  (unsigned long)st.st_uid, (unsigned long)st.st_gid, (unsigned)(st.st_mode & 07777),
		  (unsigned long)st.st_nlink);
	return -1;
}
