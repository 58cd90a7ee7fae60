#define _GNU_SOURCE
#include "keepalive_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>

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

pid_t keepalive_spawn_tied(const char *path, char *const argv[], char *const envp[], int output_fd) {
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
        // Ignored signals stay ignored across exec: reset them all, then unblock them.
        struct sigaction standard;
        standard.sa_handler = SIG_DFL;
        standard.sa_flags = 0;
        sigemptyset(&standard.sa_mask);
        for (int signal_number = 1; signal_number < NSIG; signal_number++) sigaction(signal_number, &standard, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(output_fd, 1);
        dup2(output_fd, 2);
        // Other children's pipe ends must not leak into this one (their readers would never
        // see end of file while it runs).
        close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        execve(path, argv, envp);
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
