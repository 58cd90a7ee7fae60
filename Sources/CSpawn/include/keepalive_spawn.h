#ifndef KEEPALIVE_SPAWN_H
#define KEEPALIVE_SPAWN_H

#include <sys/types.h>

/// Starts argv[0] (searched in PATH) with stdin on /dev/null, stdout on `stdout_fd`, stderr
/// inherited; in its own process group; with PR_SET_PDEATHSIG = SIGKILL so that it dies with
/// the agent, also when the agent is SIGKILLed. Returns the child's pid, or -1 with errno set.
pid_t keepalive_spawn(char *const argv[], int stdout_fd);

#endif
