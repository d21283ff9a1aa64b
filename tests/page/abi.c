/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The page ABI as a contract: the offset and size of every field of struct
 * clockd_page and struct clockd_page_data, typed in below, checked against
 * this build and against the -m32 build, line by line. A 32-bit client must
 * see the page exactly as the 64-bit daemon writes it.
 *
 * The -m32 layout comes from the compiler, not from running 32-bit code
 * (many kernels, this project's CI VM among them, cannot): built with
 * PAGE_ABI_LISTING, this file compiles (-S) to assembly holding one line
 * ".ascii \"@layout NAME OFFSET SIZE\"" per field; the make rule keeps those
 * lines in abi-m32.layout. Where the kernel can run it, the -m32 program's
 * --dump must print the same.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <clockd/page.h>
#include "tests/tap.h"

/* The contract: F(struct, field, offset, size), S(struct, size). */
#define PAGE_LAYOUT(F, S) \
	F(clockd_page_data, vclock_mode, 0, 4) \
	F(clockd_page_data, vclock_clockid, 4, 4) \
	F(clockd_page_data, cycle_last, 8, 8) \
	F(clockd_page_data, mask, 16, 8) \
	F(clockd_page_data, max_cycles, 24, 8) \
	F(clockd_page_data, mult, 32, 4) \
	F(clockd_page_data, shift, 36, 4) \
	F(clockd_page_data, mono_sec, 40, 8) \
	F(clockd_page_data, mono_snsec, 48, 8) \
	F(clockd_page_data, real_sec, 56, 8) \
	F(clockd_page_data, real_snsec, 64, 8) \
	F(clockd_page_data, raw_sec, 72, 8) \
	F(clockd_page_data, raw_snsec, 80, 8) \
	F(clockd_page_data, raw_mult, 88, 4) \
	F(clockd_page_data, xtime_nsec, 92, 4) \
	F(clockd_page_data, xtime_sec, 96, 8) \
	F(clockd_page_data, coarse_mono_sec, 104, 8) \
	F(clockd_page_data, coarse_mono_nsec, 112, 4) \
	F(clockd_page_data, leap, 116, 4) \
	F(clockd_page_data, jiffies_64, 120, 8) \
	F(clockd_page_data, kernel_mono_ns, 128, 8) \
	F(clockd_page_data, offset_ns, 136, 8) \
	F(clockd_page_data, freq_ppb, 144, 8) \
	F(clockd_page_data, error_bound_ns, 152, 8) \
	F(clockd_page_data, rms_offset_ns, 160, 8) \
	F(clockd_page_data, skew_ppb, 168, 8) \
	F(clockd_page_data, ref_mono_ns, 176, 8) \
	F(clockd_page_data, disc_state, 184, 4) \
	F(clockd_page_data, tai_offset, 188, 4) \
	S(clockd_page_data, 192) \
	F(clockd_page, magic, 0, 4) \
	F(clockd_page, abi_version, 4, 4) \
	F(clockd_page, size, 8, 4) \
	F(clockd_page, hz, 12, 4) \
	F(clockd_page, generation, 16, 8) \
	F(clockd_page, flags, 24, 4) \
	F(clockd_page, tick_ns, 28, 4) \
	F(clockd_page, stale_ns, 32, 8) \
	F(clockd_page, start_mono_ns, 40, 8) \
	F(clockd_page, jiffies_base, 48, 8) \
	F(clockd_page, jiffies_epoch_ns, 56, 8) \
	F(clockd_page, initial_jiffies, 64, 8) \
	F(clockd_page, boot_id, 72, 16) \
	F(clockd_page, source, 88, 32) \
	F(clockd_page, tick, 120, 32) \
	F(clockd_page, pid, 152, 4) \
	F(clockd_page, pad0, 156, 4) \
	F(clockd_page, vclock_path, 160, 64) \
	F(clockd_page, extrapolate_ns, 224, 8) \
	F(clockd_page, reserved0, 232, 24) \
	F(clockd_page, seq, 256, 4) \
	F(clockd_page, alarm, 260, 4) \
	F(clockd_page, writer_lock, 264, 56) \
	F(clockd_page, data, 320, 384) \
	F(clockd_page, data[1], 512, 192) \
	F(clockd_page, reserved1, 704, 320) \
	F(clockd_page, dev_seq, 1024, 4) \
	F(clockd_page, ndevices, 1028, 4) \
	F(clockd_page, devices, 1088, 1280) \
	F(clockd_page, devices[1], 1216, 128) \
	F(clockd_page, reserved3, 2368, 1728) \
	S(clockd_page, 4096) \
	F(clockd_page_device, name, 0, 16) \
	F(clockd_page_device, device, 16, 48) \
	F(clockd_page_device, role, 64, 4) \
	F(clockd_page_device, state, 68, 4) \
	F(clockd_page_device, fault, 72, 4) \
	F(clockd_page_device, since_ns, 80, 8) \
	F(clockd_page_device, faults, 88, 8) \
	F(clockd_page_device, spurious, 96, 8) \
	F(clockd_page_device, missed, 104, 8) \
	S(clockd_page_device, 128)

#ifdef PAGE_ABI_LISTING
/* The layout as this compiler sees it, in the assembly output (-S). */
#define ASM_ENTRY(type, f, off, size)                                          \
	__asm__ volatile("\n.ascii \"@layout " #type "." #f " %c0 %c1\"\n"        \
			 : : "i"(offsetof(struct type, f)), "i"(sizeof(((struct type *)0)->f)));
#define ASM_SIZE(type, size)                                                   \
	__asm__ volatile("\n.ascii \"@layout sizeof " #type " 0 %c0\"\n" : : "i"(sizeof(struct type)));
void abi_listing(void);
void abi_listing(void)
{
	PAGE_LAYOUT(ASM_ENTRY, ASM_SIZE)
}
#else
struct field {
	const char *name;
	size_t off, size;           /* in this build */
	size_t want_off, want_size; /* the contract */
};

#define ENTRY(type, f, off, size)                                              \
	{ #type "." #f, offsetof(struct type, f), sizeof(((struct type *)0)->f), off, size },
#define SIZE_ENTRY(type, size) { "sizeof " #type, 0, sizeof(struct type), 0, size },
static const struct field fields[] = { PAGE_LAYOUT(ENTRY, SIZE_ENTRY) };
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

/* One line of the layout: as this build sees it, or as the contract says. */
static void format_field(char *buf, size_t len, const struct field *f, bool contract)
{
	snprintf(buf, len, "%s %zu %zu", f->name, contract ? f->want_off : f->off,
		 contract ? f->want_size : f->size);
}

static int dump(void)
{
	char line[128];

	for (size_t i = 0; i < N_FIELDS; i++) {
		format_field(line, sizeof(line), &fields[i], false);
		printf("%s\n", line);
	}
	return 0;
}

#ifdef PAGE_ABI_M32
/* @name, next to this program. */
static void sibling(char *buf, size_t len, const char *name)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	self[n < 0 ? 0 : n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(buf, len, "%s/%s", n < 0 ? "." : self, name);
}

/* Compare the lines of @f with this build's (@native) and the contract's
 * (@contract) layout; the count of lines read. */
static size_t compare_lines(FILE *f, const char *what, size_t *native, size_t *contract)
{
	char got[256], line[128];
	size_t i;

	*native = *contract = 0;
	for (i = 0; fgets(got, sizeof(got), f); i++) {
		got[strcspn(got, "\n")] = '\0';
		if (i >= N_FIELDS) {
			tap_diag("%s: extra line \"%s\"", what, got);
			continue;
		}
		format_field(line, sizeof(line), &fields[i], false);
		if (strcmp(got, line) != 0 && (*native)++ < 5)
			tap_diag("%s: \"%s\", native: \"%s\"", what, got, line);
		format_field(line, sizeof(line), &fields[i], true);
		if (strcmp(got, line) != 0)
			(*contract)++;
	}
	return i;
}

/* The -m32 compiler's layout (abi-m32.layout): two cases. */
static void check_m32_listing(void)
{
	char path[PATH_MAX + 32];
	size_t lines = 0, native = 0, contract = 0;
	FILE *f;

	sibling(path, sizeof(path), "abi-m32.layout");
	f = fopen(path, "re");
	if (f) {
		lines = compare_lines(f, "-m32", &native, &contract);
		fclose(f);
	} else {
		tap_diag("%s: %s", path, strerror(errno));
	}
	tap_ok(lines == N_FIELDS && native == 0,
	       "-m32 layout (%zu lines) identical to the native one, line by line (%zu differ)", lines,
	       native);
	tap_ok(lines == N_FIELDS && contract == 0, "-m32 layout matches the contract (%zu differ)",
	       contract);
}

/* Run abi-m32 --dump, natively or under @emulator ("" for none). */
static size_t run_m32(const char *emulator, size_t *native, size_t *contract, int *status)
{
	char path[PATH_MAX + 32], cmd[PATH_MAX + 96];
	size_t lines;
	FILE *p;

	sibling(path, sizeof(path), "abi-m32");
	snprintf(cmd, sizeof(cmd), "%s'%s' --dump 2>/dev/null", emulator, path);
	p = popen(cmd, "r");
	if (!p)
		tap_bail("popen: %s", strerror(errno));
	lines = compare_lines(p, "abi-m32 --dump", native, contract);
	*status = pclose(p);
	return lines;
}

/* The -m32 program itself: natively, or (the program is static) under
 * qemu-i386 where the kernel has no IA-32 emulation. One case. */
static void check_m32_run(void)
{
	size_t lines, native, contract;
	int status;

	lines = run_m32("", &native, &contract, &status);
	/* sh: 126, found but cannot be executed (ENOEXEC: no IA-32 emulation). */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 126 && lines == 0) {
		if (system("command -v qemu-i386 >/dev/null 2>&1") != 0) {
			tap_skip("this kernel cannot run 32-bit programs and qemu-i386 (qemu-user) is absent");
			return;
		}
		lines = run_m32("qemu-i386 ", &native, &contract, &status);
	}
	tap_ok(status == 0 && lines == N_FIELDS && native == 0 && contract == 0,
	       "abi-m32 --dump: %zu lines, %zu differ from native, %zu from the contract, status %#x",
	       lines, native, contract, status);
}

static void check_m32(void)
{
	check_m32_listing();
	check_m32_run();
}
#else
static void check_m32(void)
{
	for (int i = 0; i < 3; i++)
		tap_skip("configure found no working -m32 toolchain (HAVE_M32 false; Debian: gcc-multilib)");
}
#endif

int main(int argc, char **argv)
{
	char line[128], contract[128];

	if (argc > 1 && strcmp(argv[1], "--dump") == 0)
		return dump();
	tap_plan((int)N_FIELDS + 3);
	tap_diag("native build: %zu-bit pointers", sizeof(void *) * 8);
	for (size_t i = 0; i < N_FIELDS; i++) {
		format_field(line, sizeof(line), &fields[i], false);
		format_field(contract, sizeof(contract), &fields[i], true);
		tap_ok(strcmp(line, contract) == 0, "%s (contract: %s)", line, contract);
	}
	check_m32();
	return tap_done();
}
#endif
