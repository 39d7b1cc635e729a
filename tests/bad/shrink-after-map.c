/*
 * shrink-after-map.c - an LD_PRELOAD shim for tests/bad/run.sh.  Its mmap
 * maps as asked, then, when a file is mapped at a fixed address (as
 * cli/io.c maps an input over its reservation), truncates that file to
 * ATTN_TEST_SHRINK bytes: another process shrinking the input while attn
 * reads it, every time and with no timing involved.  attn must then say
 * so in one line and exit 74, not die of SIGBUS.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void *
mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	const char *to = getenv("ATTN_TEST_SHRINK");
	void *p = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	char path[64];
	int w;

	if (p != MAP_FAILED && fd >= 0 && (flags & MAP_FIXED) && to != NULL) {
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		if ((w = open(path, O_WRONLY)) >= 0) {
			if (ftruncate(w, strtoll(to, NULL, 10)) != 0)
				_exit(99);
			close(w);
		}
	}
	return p;
}
