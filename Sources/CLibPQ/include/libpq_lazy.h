// libpq's API, for `keepalive archive` alone (docs/fleet.md). The agent does not link libpq:
// its functions here load libpq.so.5 on first use (libpq_lazy.c), so an agent that never archives
// maps none of libpq's twenty libraries (Kerberos, LDAP, GnuTLS, …: ~2.3 MiB resident in every
// agent and every `keepalive query`), and a Pi needs no libpq5 installed.
#ifndef KEEPALIVE_LIBPQ_LAZY_H
#define KEEPALIVE_LIBPQ_LAZY_H

#include <postgresql/libpq-fe.h>

// Why libpq.so.5 could not be loaded, or NULL when it is loaded (loading it if not yet tried).
const char *keepalive_libpq_problem(void);

#endif
