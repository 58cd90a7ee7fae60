#define _GNU_SOURCE
#include "keepalive_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>

/// The rt_sigaction argument as the kernel lays it out (arm64 and x86_64 both have sa_restorer).
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

/// What differs between the two ways of starting a child; everything else is shared.
struct spawn_plan {
    const char *path;    // NULL: argv[0], searched in PATH, with the parent's environment
    char *const *argv;
    char *const *envp;   // used with `path`
    int output_fd;       // becomes stdout
    int stderr_too;      // stderr also on output_fd (else inherited)
    int own_group;       // setpgid(0, 0)
};

// Closes every descriptor from `first` up, except `keep`. close_range needs Linux 5.9; older
// kernels get the slow loop up to the descriptor limit. Async-signal-safe.
static void close_from(int first, int keep) {
    if (keep >= first) {
        if (keep > first && close_range((unsigned)first, (unsigned)keep - 1, 0) != 0) goto loop;
        if (close_range((unsigned)keep + 1, ~0U, 0) != 0) goto loop;
        return;
    }
    if (close_range((unsigned)first, ~0U, 0) == 0) return;
loop:;
    struct rlimit limit;
    long last = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY ? (long)limit.rlim_cur : 65536;
    for (long fd = first; fd < last; fd++) {
        if (fd != keep) close((int)fd);
    }
}

// fork, set the child up, exec; an exec failure comes back through a close-on-exec pipe.
// Between fork and exec only async-signal-safe calls: the parent is multithreaded.
//
// The child inherits nothing of the parent but stderr (unless redirected) and the environment:
// every signal at its default disposition (ignored ones would stay ignored across exec — the
// agent ignores SIGPIPE) and unblocked, and no descriptor above stderr, whether or not its owner
// marked it close-on-exec (the agent's MQTT socket, its SQLite files, other children's pipes).
static pid_t spawn(const struct spawn_plan *plan) {
    pid_t parent = getpid();
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return -1;
    pid_t child = fork();
    if (child < 0) {
        int saved = errno;
        close(report[0]);
        close(report[1]);
        errno = saved;
        return -1;
    }
    if (child == 0) {
        // The kernel's own call: glibc's sigaction refuses the signals it reserves (32, 33),
        // which a parent may well have ignored.
        struct kernel_sigaction standard = {.handler = SIG_DFL, .flags = 0, .restorer = NULL, .mask = 0};
        for (int signal_number = 1; signal_number <= 64; signal_number++) {
            syscall(SYS_rt_sigaction, signal_number, &standard, NULL, sizeof standard.mask);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (plan->own_group) setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        // The parent may have died before prctl took effect.
        if (getppid() != parent) _exit(127);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(plan->output_fd, 1);
        if (plan->stderr_too) dup2(plan->output_fd, 2);
        // The report pipe's write end stays until exec closes it (it is close-on-exec).
        close_from(3, report[1]);
        if (plan->path) {
            execve(plan->path, plan->argv, plan->envp);
        } else {
            execvp(plan->argv[0], plan->argv);
        }
        int error = errno;
        (void)!write(report[1], &error, sizeof error);
        _exit(127);
    }
    close(report[1]);
    int error = 0;
    ssize_t got = read(report[0], &error, sizeof error);
    close(report[0]);
    if (got == (ssize_t)sizeof error) {
        int status;
        waitpid(child, &status, 0);
        errno = error;
        return -1;
    }
    return child;
}

pid_t keepalive_spawn(char *const argv[], int stdout_fd) {
    struct spawn_plan plan = {.path = NULL, .argv = argv, .envp = NULL, .output_fd = stdout_fd, .stderr_too = 0, .own_group = 1};
    return spawn(&plan);
}

pid_t keepalive_spawn_tied(const char *path, char *const argv[], char *const envp[], int output_fd) {
    struct spawn_plan plan = {.path = path, .argv = argv, .envp = envp, .output_fd = output_fd, .stderr_too = 1, .own_group = 0};
    return spawn(&plan);
}
