/*
 * random.c — the kernel's random bytes (random.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "random.h"
#if defined(__linux__)
#include <sys/random.h>
#endif

/* /dev/urandom, for kernels (or sandboxes) without getrandom. */
static int from_urandom(unsigned char *p, size_t n) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return -errno;
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = r < 0 ? errno : EIO;
      close(fd);
      return -e;
    }
    p += r;
    n -= (size_t)r;
  }
  close(fd);
  return 0;
}

int tg__random_bytes(void *buf, size_t n) {
  unsigned char *p = buf;
#if defined(__linux__)
  while (n) {
    ssize_t r = getrandom(p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errno == ENOSYS || errno == EPERM ? from_urandom(p, n)
                                                        : -errno;
    p += r;
    n -= (size_t)r;
  }
  return 0;
#else
  return from_urandom(p, n);
#endif
}
