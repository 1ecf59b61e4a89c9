/*
 * bench_relay.c — the ceiling of any MCP gateway that runs as a process
 * of its own: it starts a command (an MCP server) on pipes and copies
 * bytes both ways — client → server, server → client — as they come,
 * with no parsing, no policy and no audit. bench/mcp_bench.mjs puts it
 * beside `toolgate serve`: the throughput this keeps against the direct
 * connection is what the third process and its two extra pipe hops cost
 * on this machine, before toolgate does any work of its own.
 *   bench_relay COMMAND [ARGS...]
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Copies what one read of `from` gives to `to`; 0 at end of input or on
 * an error (the relay ends: either side is gone). */
static int pass(int from, int to) {
  static char buf[1 << 16];
  ssize_t n = read(from, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return 1;
  for (ssize_t off = 0; n > 0 && off < n;) {
    ssize_t w = write(to, buf + off, (size_t)(n - off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    off += w;
  }
  return n > 0;
}

int main(int argc, char **argv) {
  int in[2], out[2];
  if (argc < 2) {
    fprintf(stderr, "usage: bench_relay COMMAND [ARGS...]\n");
    return 2;
  }
  if (pipe(in) || pipe(out)) return perror("pipe"), 1;
  pid_t pid = fork();
  if (pid < 0) return perror("fork"), 1;
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = out[0], .events = POLLIN}};
  for (int open = 1; open;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents) open = pass(0, in[1]);
    if (open && fds[1].revents) open = pass(out[0], 1);
  }
  close(in[1]); /* the server sees its end of input and exits */
  int status;
  waitpid(pid, &status, 0);
  return 0;
}
