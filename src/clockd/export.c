/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Export to chronyd (or ntpd): the NTP SHM refclock segment and chrony's
 * SOCK refclock datagram. Both layouts are other programs' ABIs, written
 * here from their public descriptions; they are what those daemons read,
 * not what this project would design (time_t, int; see
 * include/clockd/page.h for the fixed-width layout we use).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <clockd/page.h>
#include "clockd/export.h"
#include "shared/log.h"
#include "shared/tickmath.h"

#define NTP_SHM_KEY_BASE 0x4e545030 /* "NTP0" */
#define NTP_SHM_MODE_COUNT 1        /* the count/valid protocol below */
/* The leap field of both protocols is NTP's leap indicator: 0 none, 1 the
 * last minute of the UTC day has 61 s, 2 it has 59 s (chronyd's
 * LEAP_InsertSecond / LEAP_DeleteSecond, ntpd's LEAP_ADDSECOND /
 * LEAP_DELSECOND), 3 not in sync: chronyd drops such a sample. */
#define NTP_LEAP_NONE 0
#define NTP_LEAP_INSERT 1
#define NTP_LEAP_DELETE 2
#define NTP_LEAP_UNSYNC 3
#define SOCK_MAGIC 0x534f434b       /* "SOCK" */

/*
 * ntpd's type-28 shared memory segment, as chronyd's refclock SHM reads it
 * on Linux (native int and time_t: 96 bytes on x86-64). The reader copies
 * the segment, and uses the copy only when valid is set and, in mode 1,
 * count is the same before and after its copy; it then clears valid.
 */
struct ntp_shm {
	int mode;
	int count;
	time_t clock_sec;       /* the reference's time: clockd */
	int clock_usec;
	time_t receive_sec;     /* the system time at the same instant */
	int receive_usec;
	int leap;
	int precision;          /* log2 of the timestamps' resolution, s */
	int nsamples;
	int valid;
	unsigned clock_nsec;    /* used by readers when usec == nsec / 1000 */
	unsigned receive_nsec;
	int dummy[8];
};

#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct ntp_shm) == 96, "struct shmTime is 96 bytes on LP64 Linux");
#endif

/* chronyd's SOCK refclock sample: the reference time is tv + offset. */
struct sock_sample {
	struct timeval tv;      /* the system time of the sample */
	double offset;          /* reference - system, s */
	int pulse;              /* 0: a time sample, not a bare PPS edge */
	int leap;
	int pad;
	int magic;              /* SOCK_MAGIC */
};

enum sock_state { SOCK_UNKNOWN, SOCK_UP, SOCK_WAITING, SOCK_FAILING };

struct export_state {
	int precision;
	unsigned shm_mode;
	enum sock_state sock;   /* what was last logged */
	bool connected;
};

static struct export_state *state_of(struct exporter *ex)
{
	return ex->priv;
}

/* NTP's indicator for the page's CLOCKD_LEAP_* (without KNOWN: none). */
static int leap_indicator(bool valid, uint32_t leap)
{
	if (!valid)
		return NTP_LEAP_UNSYNC;
	switch (leap & CLOCKD_LEAP_MASK) {
	case CLOCKD_LEAP_INSERT:
		return NTP_LEAP_INSERT;
	case CLOCKD_LEAP_DELETE:
		return NTP_LEAP_DELETE;
	default:
		return NTP_LEAP_NONE;
	}
}

/* log2 of the tick period, rounded towards the longer period: the
 * resolution of clockd's time between two updates. */
static int precision_of(uint32_t hz)
{
	int p = 0;

	if (hz == 0)
		return -20;
	while (p > -30 && (1ull << -p) < hz)
		p--;
	return p;
}

/* Root or this daemon's user: the only owners and creators of a segment
 * no one else may have attached to for writing. */
static bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * An existing segment is reused only when nobody else can have written
 * it: created and owned by root or this daemon's user (a creator may give
 * the segment to another owner, so both are checked), and not open to the
 * world beyond what ntp_shm_mode says (permissions are checked only at
 * shmat: whoever attached while it was open could go on writing). Other
 * permissions are set to the configured ones when the segment is ours.
 * 1 reuse, 0 re-create (said why), -1 refused (the wrong size: not an NTP
 * segment, perhaps another program's).
 */
static int shm_check_existing(int id, key_t key, unsigned mode)
{
	struct shmid_ds ds;
	unsigned have;

	if (shmctl(id, IPC_STAT, &ds) < 0) {
		log_warn("NTP SHM key 0x%08x: cannot inspect the existing segment", (unsigned)key);
		return -1;
	}
	have = ds.shm_perm.mode & 0777;
	if (ds.shm_segsz != sizeof(struct ntp_shm)) {
		log_warnx("NTP SHM key 0x%08x: an existing segment has %zu bytes, not %zu: not an NTP SHM "
			  "segment of this machine; remove it (ipcrm -M 0x%08x) or use another ntp_shm_unit",
			  (unsigned)key, (size_t)ds.shm_segsz, sizeof(struct ntp_shm), (unsigned)key);
		return -1;
	}
	if (!trusted_uid(ds.shm_perm.uid) || !trusted_uid(ds.shm_perm.cuid)) {
		log_warnx("NTP SHM key 0x%08x: the existing segment has owner uid %u, creator uid %u and "
			  "permissions %04o (%lu attached): not root's or this daemon's, whoever made it may "
			  "write it; removed and created afresh", (unsigned)key, (unsigned)ds.shm_perm.uid,
			  (unsigned)ds.shm_perm.cuid, have, (unsigned long)ds.shm_nattch);
		return 0;
	}
	if ((have & 0002) && !(mode & 0002)) {
		log_warnx("NTP SHM key 0x%08x: the existing segment is world-writable (%04o, ntp_shm_mode is "
			  "%04o, owner uid %u, %lu attached): anyone attached may feed time; removed and created "
			  "afresh", (unsigned)key, have, mode, (unsigned)ds.shm_perm.uid,
			  (unsigned long)ds.shm_nattch);
		return 0;
	}
	if (have == mode)
		return 1;
	if (ds.shm_perm.uid != geteuid()) {
		log_warnx("NTP SHM key 0x%08x: the existing segment has permissions %04o and owner uid %u, "
			  "not ntp_shm_mode %04o: removed and created afresh (not ours to change)",
			  (unsigned)key, have, (unsigned)ds.shm_perm.uid, mode);
		return 0;
	}
	ds.shm_perm.mode = (ds.shm_perm.mode & ~0777u) | mode;
	if (shmctl(id, IPC_SET, &ds) < 0) {
		log_warn("NTP SHM key 0x%08x: cannot change permissions %04o to %04o", (unsigned)key, have, mode);
		return -1;
	}
	log_notice("NTP SHM key 0x%08x: permissions of the existing segment changed from %04o to %04o",
		   (unsigned)key, have, mode);
	return 1;
}

/*
 * The segment of @key: created fresh (IPC_EXCL, so never one someone made
 * in between), or an existing one shm_check_existing() trusts; one it does
 * not is removed (its key is free at once; whoever is attached keeps an
 * orphan nobody else reads) and created again. The id, or -1 (logged).
 */
static int shm_get(key_t key, int unit, unsigned mode)
{
	for (int tries = 0; tries < 3; tries++) {
		int id = shmget(key, sizeof(struct ntp_shm), IPC_CREAT | IPC_EXCL | (int)mode), ok;

		if (id >= 0)
			return id;
		if (errno != EEXIST)
			break;
		/* Size 0: any existing size, checked next. */
		id = shmget(key, 0, 0);
		if (id < 0 && errno == ENOENT)
			continue; /* removed in between */
		if (id < 0)
			break;
		ok = shm_check_existing(id, key, mode);
		if (ok != 0)
			return ok > 0 ? id : -1;
		if (shmctl(id, IPC_RMID, NULL) < 0) {
			log_warn("NTP SHM key 0x%08x: cannot remove the segment: refused", (unsigned)key);
			return -1;
		}
	}
	log_warn("NTP SHM key 0x%08x (unit %d)", (unsigned)key, unit);
	return -1;
}

/* Find or create the segment, check it, attach it. 0 or -1 (logged). */
static int shm_open_unit(struct exporter *ex, int unit, unsigned mode)
{
	key_t key = (key_t)(NTP_SHM_KEY_BASE + unit);
	struct ntp_shm *shm;
	int id = shm_get(key, unit, mode);

	if (id < 0)
		return -1;
	shm = shmat(id, NULL, 0);
	if (shm == (void *)-1) {
		log_warn("NTP SHM key 0x%08x: cannot attach", (unsigned)key);
		return -1;
	}
	__atomic_store_n(&shm->valid, 0, __ATOMIC_RELAXED);
	shm->mode = NTP_SHM_MODE_COUNT;
	ex->shm_id = id;
	ex->shm = shm;
	log_info("exporting to NTP SHM unit %d (key 0x%08x, mode %04o%s)", unit, (unsigned)key, mode,
		 (mode & 0002) ? ", world-writable" : "");
	if (mode & 0002)
		log_warnx("NTP SHM unit %d is world-writable (ntp_shm_mode %04o): any local user can feed "
			  "time to its readers", unit, mode);
	return 0;
}

static void split_ns(int64_t ns, time_t *sec, unsigned *nsec)
{
	int64_t s = ns / (int64_t)NSEC_PER_SEC, r = ns % (int64_t)NSEC_PER_SEC;

	if (r < 0) {
		r += (int64_t)NSEC_PER_SEC;
		s--;
	}
	*sec = (time_t)s;
	*nsec = (unsigned)r;
}

/*
 * Mode 1: count is odd while the fields change, and a reader that saw it
 * change discards its copy. Each fence orders the count against the field
 * stores; valid goes last so a reader never takes a half-written sample.
 */
static void shm_write(struct exporter *ex, int64_t clockd_ns, int64_t system_ns, int leap)
{
	struct ntp_shm *shm = ex->shm;
	time_t sec;
	unsigned nsec;

	__atomic_store_n(&shm->count, shm->count + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	shm->mode = NTP_SHM_MODE_COUNT;
	split_ns(clockd_ns, &sec, &nsec);
	shm->clock_sec = sec;
	shm->clock_nsec = nsec;
	shm->clock_usec = (int)(nsec / 1000);
	split_ns(system_ns, &sec, &nsec);
	shm->receive_sec = sec;
	shm->receive_nsec = nsec;
	shm->receive_usec = (int)(nsec / 1000);
	shm->leap = leap;
	shm->precision = state_of(ex)->precision;
	shm->nsamples = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&shm->count, shm->count + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&shm->valid, 1, __ATOMIC_RELAXED);
}

static void sock_log_state(struct exporter *ex, enum sock_state s, int err)
{
	struct export_state *st = state_of(ex);

	if (st->sock == s)
		return;
	st->sock = s;
	switch (s) {
	case SOCK_UP:
		log_notice("chrony SOCK %s: sending samples", ex->sock_path);
		break;
	case SOCK_WAITING:
		log_notice("chrony SOCK %s: %s; is chronyd running with this refclock SOCK? "
			   "retrying at every sample", ex->sock_path, strerror(err));
		break;
	default:
		/* chronyd makes the socket as root, before it drops to its
		 * user, with its umask (0755 root:root; Debian's unit puts it
		 * in /run/chrony, 0700 _chrony): only root may send to it. */
		if (err == EACCES && geteuid() != 0)
			log_warnx("chrony SOCK %s: %s; chronyd makes its SOCK writable by root only and this daemon "
				  "runs as uid %lu: samples are dropped. Use ntp_shm_unit with chrony's refclock SHM "
				  "(clockd(8), Feeding chrony)", ex->sock_path, strerror(err), (unsigned long)geteuid());
		else
			log_warnx("chrony SOCK %s: %s; samples are dropped until it works again", ex->sock_path,
				  strerror(err));
		break;
	}
}

/* (Re)connect to chronyd's socket: chronyd creates it, and a new chronyd
 * creates a new one at the same path. */
static bool sock_connect(struct exporter *ex)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct export_state *st = state_of(ex);

	memcpy(sa.sun_path, ex->sock_path, sizeof(sa.sun_path));
	if (connect(ex->sock_fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		sock_log_state(ex, errno == ENOENT || errno == ECONNREFUSED ? SOCK_WAITING : SOCK_FAILING, errno);
		return false;
	}
	st->connected = true;
	return true;
}

static void sock_send(struct exporter *ex, int64_t clockd_ns, int64_t system_ns, int leap)
{
	struct export_state *st = state_of(ex);
	struct sock_sample s = { .pulse = 0, .magic = SOCK_MAGIC };
	time_t sec;
	unsigned nsec;

	if (!st->connected && !sock_connect(ex))
		return;
	/* chronyd takes tv as the exact system time of the sample and offset
	 * as clockd minus system then: the offset is the exact difference of
	 * the pair, to the ns. tv holds microseconds, so the sample is dated
	 * up to 1 us early, which moves the offset by the rate difference
	 * times 1 us (1e-6 ns at 1 ppm). Taking the offset against the
	 * truncated tv instead would add 0 to 1 us to every offset. */
	split_ns(system_ns, &sec, &nsec);
	s.tv.tv_sec = sec;
	s.tv.tv_usec = (suseconds_t)(nsec / 1000);
	s.offset = (double)(clockd_ns - system_ns) / 1e9;
	s.leap = leap;
	if (send(ex->sock_fd, &s, sizeof(s), MSG_DONTWAIT) == (ssize_t)sizeof(s)) {
		sock_log_state(ex, SOCK_UP, 0);
		return;
	}
	ex->send_errors++;
	if (errno == ECONNREFUSED || errno == ENOTCONN || errno == ENOENT) {
		/* chronyd went away: reconnect at the next sample. */
		st->connected = false;
		sock_log_state(ex, SOCK_WAITING, errno);
	} else {
		/* EAGAIN: chronyd is not reading; the sample is dropped. */
		sock_log_state(ex, SOCK_FAILING, errno);
	}
}

static int sock_open(struct exporter *ex, const char *path)
{
	if (strlen(path) >= sizeof(ex->sock_path)) {
		log_warnx("chrony_sock %s: path too long for a unix socket", path);
		return -1;
	}
	strcpy(ex->sock_path, path);
	ex->sock_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ex->sock_fd < 0) {
		log_warn("chrony_sock %s: socket", path);
		return -1;
	}
	log_info("exporting to chrony SOCK %s", path);
	/* chronyd may come later: that is not an error. */
	sock_connect(ex);
	return 0;
}

int export_open(struct exporter *ex, const struct export_params *p)
{
	struct export_state *st;

	memset(ex, 0, sizeof(*ex));
	ex->shm_id = -1;
	ex->sock_fd = -1;
	st = calloc(1, sizeof(*st));
	if (!st) {
		log_warn("export");
		return -1;
	}
	ex->priv = st;
	st->precision = precision_of(p->hz);
	st->shm_mode = p->ntp_shm_mode;
	if (p->ntp_shm_unit >= 0 && shm_open_unit(ex, (int)p->ntp_shm_unit, st->shm_mode) < 0)
		goto err_close;
	if (p->chrony_sock[0] && sock_open(ex, p->chrony_sock) < 0)
		goto err_close;
	return 0;
err_close:
	export_close(ex);
	return -1;
}

void export_sample(struct exporter *ex, int64_t clockd_ns, int64_t system_ns, bool valid, uint32_t leap)
{
	int li = leap_indicator(valid, leap);

	if (ex->shm)
		shm_write(ex, clockd_ns, system_ns, li);
	if (ex->sock_fd >= 0)
		sock_send(ex, clockd_ns, system_ns, li);
	ex->samples++;
}

/*
 * Detach only: the segment is not removed (IPC_RMID), since chronyd may
 * still be attached and would keep reading a segment nobody can find
 * again; a restarted clockd reuses it. chronyd's socket is chronyd's.
 */
void export_close(struct exporter *ex)
{
	if (ex->shm) {
		__atomic_store_n(&((struct ntp_shm *)ex->shm)->valid, 0, __ATOMIC_RELEASE);
		shmdt(ex->shm);
	}
	if (ex->sock_fd >= 0)
		close(ex->sock_fd);
	free(ex->priv);
	ex->shm = NULL;
	ex->shm_id = -1;
	ex->sock_fd = -1;
	ex->priv = NULL;
}
