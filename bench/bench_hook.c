/*
 * bench_hook.c — what one `toolgate hook claude-code` process costs the
 * agent: the wall time from spawning it to its exit, answering a
 * PreToolUse event for Bash with the given policies, with a resident
 * instance (`toolgate daemon`) and without one, beside spawning `true`, a
 * minimal shell hook and a minimal Python hook the same way (posix_spawn,
 * the event on stdin, stdout to /dev/null), interleaved so a busy machine
 * slows all alike — one of each in turn, then in blocks of back-to-back
 * spawns — and the CPU time each used, which a busy machine does not
 * stretch. `toolgate --version` is there as the floor: what starting the
 * command costs before it does anything (the loader, its libraries).
 *
 * usage: bench_hook TOOLGATE POLICIES [rounds]   (bench/run.sh runs it)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <sys/wait.h>

extern char **environ;

static const char event[] =
    "{\"session_id\":\"bench-session\",\"transcript_path\":null,\"cwd\":"
    "\"/tmp\",\"hook_event_name\":\"PreToolUse\",\"permission_mode\":"
    "\"default\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls -la "
    "src\",\"description\":\"List the sources\"},\"tool_use_id\":\"toolu_1\"}\n";

#define ALLOW "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\"," \
              "\"permissionDecision\":\"allow\"}}"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One spawn with the event on stdin; its wall time in ms, and the CPU
 * time it used (user + system) in *cpu: what a busy machine does not
 * stretch. */
static double spawn_once(char *const argv[], const char *input, double *cpu) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, input, O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  double t0 = now_ms();
  pid_t pid;
  if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
    fprintf(stderr, "bench_hook: cannot run %s\n", argv[0]);
    exit(2);
  }
  int st;
  struct rusage ru;
  wait4(pid, &st, 0, &ru);
  double ms = now_ms() - t0;
  if (cpu)
    *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  posix_spawn_file_actions_destroy(&fa);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "bench_hook: %s failed\n", argv[0]);
    exit(2);
  }
  return ms;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[(int)(p * (n - 1) + 0.5)];
}

static int can_connect(const char *path) { /* path: under 100 bytes */
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%.100s", path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
  close(fd);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_hook TOOLGATE POLICIES [rounds]\n");
    return 2;
  }
  char *tg = argv[1], *pol = argv[2];
  int rounds = argc > 3 ? atoi(argv[3]) : 300;
  char dir[] = "/tmp/tg-bench-hook-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char input[128], sock[128], state[128];
  snprintf(input, sizeof input, "%s/event.json", dir);
  snprintf(sock, sizeof sock, "%s/d.sock", dir);
  snprintf(state, sizeof state, "%s/state", dir);
  setenv("XDG_STATE_HOME", state, 1); /* its database, not the user's */
  FILE *f = fopen(input, "w");
  fputs(event, f);
  fclose(f);
  pid_t d = fork();
  if (d == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    execl(tg, tg, "daemon", "--policies", pol, "--socket", sock, (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 500 && !can_connect(sock); i++) usleep(10000);
  char *cmds[][8] = {
      {"true", NULL},
      {"sh", "-c", "cat >/dev/null; echo '" ALLOW "'", NULL},
      {"python3", "-c", "import sys, json; json.load(sys.stdin); "
       "print(json.dumps({'hookSpecificOutput': {'hookEventName': "
       "'PreToolUse', 'permissionDecision': 'allow'}}))", NULL},
      {tg, "hook", "claude-code", "--policies", pol, "--socket", sock, NULL},
      {tg, "hook", "claude-code", "--policies", pol, "--no-resident", NULL},
      /* the floor under the resident row: starting the command alone */
      {tg, "--version", NULL},
  };
  const char *names[] = {"spawn `true`", "shell hook (sh -c)",
                         "Python hook (python3 -c)",
                         "toolgate hook, resident instance",
                         "toolgate hook, no instance",
                         "toolgate --version (start-up alone)"};
  enum { N = 6 };
  double *t[N], *u[N];
  for (int c = 0; c < N; c++) {
    t[c] = calloc((size_t)rounds, sizeof **t);
    u[c] = calloc((size_t)rounds, sizeof **u);
    for (int w = 0; w < 10; w++) spawn_once(cmds[c], input, NULL); /* warm up */
  }
  /* Two ways, same run: one spawn of each in turn (between two hooks the
   * machine did something else: the Python hook's 30+ ms), and blocks of
   * BLOCK spawns of one command (back to back, as an agent's burst of
   * tool calls), the blocks in turn. */
  enum { BLOCK = 20 };
  for (int way = 0; way < 2; way++) {
    for (int r = 0; r < rounds;) {
      int k = way ? BLOCK : 1;
      if (r + k > rounds) k = rounds - r;
      for (int c = 0; c < N; c++)
        for (int i = 0; i < k; i++)
          t[c][r + i] = spawn_once(cmds[c], input, &u[c][r + i]);
      r += k;
    }
    double p50[N], p90[N], cpu50[N];
    for (int c = 0; c < N; c++) {
      p50[c] = pct(t[c], rounds, 0.5);
      p90[c] = pct(t[c], rounds, 0.9);
      cpu50[c] = pct(u[c], rounds, 0.5);
    }
    printf("%sone hook process, PreToolUse for Bash, %d spawns each, %s\n\n",
           way ? "\n" : "", rounds,
           way ? "in blocks of 20 back to back" : "one of each in turn");
    printf("| hook | p50 ms | p90 ms | p50 / true | Python p50 / p50 | CPU "
           "p50 ms | CPU / true |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < N; c++)
      printf("| %s | %.2f | %.2f | %.2fx | %.1fx | %.2f | %.2fx |\n", names[c],
             p50[c], p90[c], p50[c] / p50[0], p50[2] / p50[c], cpu50[c],
             cpu50[c] / cpu50[0]);
    printf("\ngoals: resident p50 within 1.5x of true (%s: %.2fx), at least "
           "20x faster than Python (%s: %.1fx); no instance under 5 ms (%s: "
           "%.2f ms)\n",
           p50[3] <= 1.5 * p50[0] ? "met" : "not met", p50[3] / p50[0],
           p50[2] / p50[3] >= 20 ? "met" : "not met", p50[2] / p50[3],
           p50[4] < 5 ? "met" : "not met", p50[4]);
  }
  kill(d, SIGTERM);
  waitpid(d, NULL, 0);
  for (int c = 0; c < N; c++) {
    free(t[c]);
    free(u[c]);
  }
  unlink(input);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) return 1;
  return 0;
}
