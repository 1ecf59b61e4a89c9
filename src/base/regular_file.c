/* regular_file.c — see regular_file.h. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "regular_file.h"

static const char *file_kind(mode_t m) {
  return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO"
       : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
       : S_ISSOCK(m) ? "a socket" : "a file of another kind";
}

int tg__open_regular(const char *path, const char **kind) {
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    *kind = file_kind(st.st_mode);
    return TG_NOT_REGULAR;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *kind = fstat(fd, &st) == 0 ? file_kind(st.st_mode) : "unreadable";
    close(fd);
    return TG_NOT_REGULAR;
  }
  return fd;
}
