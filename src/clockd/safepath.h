/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Path hygiene for the files the daemon makes (the time page, the control
 * socket), as sshd and chrony check theirs: a file is only as safe as the
 * directories above it. A directory that a user other than root or the
 * daemon's own may change lets that user replace the page with a forged
 * one, bind a fake control socket, or plant a symbolic link where root is
 * about to chown or chmod. So the directory of each file is opened once,
 * component by component without following links, every directory on the
 * way checked, and the file is then made relative to that descriptor.
 *
 * Single-threaded set-up code (main thread, before privileges go).
 */
#ifndef CLOCKD_SAFEPATH_H
#define CLOCKD_SAFEPATH_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/un.h>

/* Besides root and this process's effective uid, trust directories owned
 * by @uid (the user the daemon runs as once privileges go; a systemd
 * RuntimeDirectory belongs to it). (uid_t)-1: nobody else. */
void safepath_trust(uid_t uid);

/*
 * The directory of the absolute @path, opened (O_DIRECTORY, O_CLOEXEC), its
 * symbolic links resolved once and then every directory from / down walked
 * without following any: each must belong to root, this process's uid or
 * the trusted one, and group and others may write it only when it is
 * sticky. A missing last directory is created (0755) in a checked parent.
 * @path's last component goes to @base (@len bytes). The descriptor, or -1
 * after one line naming @what (the config key), the directory, its owner
 * and its mode.
 */
int safepath_dir(const char *what, const char *path, char *base, size_t len);

/* A new file in @dirfd named "@base.XXXXXX" (O_CREAT | O_EXCL |
 * O_NOFOLLOW, mode 0600), its name in @tmp (@len bytes). fd or -1 (errno). */
int safepath_mktemp(int dirfd, const char *base, char *tmp, size_t len);

/* An address naming @base in the directory @dirfd through /proc/self/fd,
 * so that bind and connect reach that directory whatever the path now
 * names. 0, or -1 (ENAMETOOLONG). */
int safepath_sockaddr(int dirfd, const char *base, struct sockaddr_un *sa);

/* The node @base in @dirfd is the socket this process just bound: a
 * socket (not followed if a link), owned by this euid, one link, group
 * @gid unless (gid_t)-1, permissions @mode. 0, or -1 after one line naming
 * @path, what it is, its owner and its mode. */
int safepath_check_socket(int dirfd, const char *base, const char *path, gid_t gid, mode_t mode);

#endif
