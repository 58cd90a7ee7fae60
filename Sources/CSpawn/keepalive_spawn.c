#define _GNU_SOURCE
#include "keepalive_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>

/// What differs between the two ways of starting a child; everything else is shared.
struct spawn_plan {
    const char *path;    // NULL: argv[0], searched in PATH, with the parent's environment
    char *const *argv;
    char *const *envp;   // used with `path`
    int output_fd;       // becomes stdout
    int stderr_too;      // stderr also on output_fd (else inherited)
    int own_group;       // setpgid(0, 0)
    int isolate;         // default signal dispositions; no other inherited descriptors
};

// fork, set the child up, exec; an exec failure comes back through a close-on-exec pipe.
// Between fork and exec only async-signal-safe calls: the parent is multithreaded.
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
        if (plan->isolate) {
            // Ignored signals stay ignored across exec: reset them all.
            struct sigaction standard;
            standard.sa_handler = SIG_DFL;
            standard.sa_flags = 0;
            sigemptyset(&standard.sa_mask);
            for (int signal_number = 1; signal_number < NSIG; signal_number++) sigaction(signal_number, &standard, NULL);
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
        // Other children's pipe ends must not leak into this one (their readers would never
        // see end of file while it runs).
        if (plan->isolate) close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
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
    struct spawn_plan plan = {.path = NULL, .argv = argv, .envp = NULL, .output_fd = stdout_fd, .stderr_too = 0, .own_group = 1, .isolate = 0};
    return spawn(&plan);
}

pid_t keepalive_spawn_tied(const char *path, char *const argv[], char *const envp[], int output_fd) {
    struct spawn_plan plan = {.path = path, .argv = argv, .envp = envp, .output_fd = output_fd, .stderr_too = 1, .own_group = 0, .isolate = 1};
    return spawn(&plan);
}
