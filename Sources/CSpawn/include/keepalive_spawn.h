#ifndef KEEPALIVE_SPAWN_H
#define KEEPALIVE_SPAWN_H

#include <sys/types.h>

// Both start a child that inherits no descriptor above stderr (close-on-exec or not), every
// signal at its default disposition and unblocked, and PR_SET_PDEATHSIG = SIGKILL.

/// Starts argv[0] (searched in PATH) with stdin on /dev/null, stdout on `stdout_fd`, stderr
/// inherited; in its own process group; it dies with the agent, also when the agent is
/// SIGKILLed. Returns the child's pid, or -1 with errno set.
pid_t keepalive_spawn(char *const argv[], int stdout_fd);

/// Starts `path` with `argv` and `envp`, stdin on /dev/null, stdout and stderr on `output_fd`.
/// The child dies when the calling *thread* ends, so call it from a thread that lives as long
/// as the process. For test harnesses whose runner may be killed. Returns the pid, or -1 with
/// errno set.
pid_t keepalive_spawn_tied(const char *path, char *const argv[], char *const envp[], int output_fd);

#endif
