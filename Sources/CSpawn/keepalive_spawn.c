#define _GNU_SOURCE
#include "keepalive_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

// Between fork and exec only async-signal-safe calls: the parent is multithreaded.
pid_t keepalive_spawn(char *const argv[], int stdout_fd) {
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
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        // The parent may have died before prctl took effect.
        if (getppid() != parent) _exit(127);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(stdout_fd, 1);
        execvp(argv[0], argv);
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
