// The libpq functions keepalive uses, each forwarding to libpq.so.5 loaded on first use
// (libpq_lazy.h says why). Their prototypes are libpq-fe.h's own, so the compiler checks them.
// Without the library each behaves as libpq does for a connection that could not be made.
#include "libpq_lazy.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

static struct {
    void *handle;
    char problem[256];
    PGconn *(*connectdb)(const char *);
    ConnStatusType (*status)(const PGconn *);
    char *(*errorMessage)(const PGconn *);
    void (*finish)(PGconn *);
    PGresult *(*execParams)(PGconn *, const char *, int, const Oid *, const char *const *, const int *, const int *, int);
    ExecStatusType (*resultStatus)(const PGresult *);
    char *(*resultErrorMessage)(const PGresult *);
    char *(*resultErrorField)(const PGresult *, int);
    int (*ntuples)(const PGresult *);
    int (*nfields)(const PGresult *);
    char *(*getvalue)(const PGresult *, int, int);
    int (*getisnull)(const PGresult *, int, int);
    char *(*cmdTuples)(PGresult *);
    void (*clear)(PGresult *);
} pq;

static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void) {
    pq.handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (pq.handle == NULL) {
        const char *error = dlerror();
        snprintf(pq.problem, sizeof pq.problem, "%s", error ? error : "libpq.so.5 could not be loaded");
        return;
    }
#define RESOLVE(field, name) *(void **)(&pq.field) = dlsym(pq.handle, name)
    RESOLVE(connectdb, "PQconnectdb");
    RESOLVE(status, "PQstatus");
    RESOLVE(errorMessage, "PQerrorMessage");
    RESOLVE(finish, "PQfinish");
    RESOLVE(execParams, "PQexecParams");
    RESOLVE(resultStatus, "PQresultStatus");
    RESOLVE(resultErrorMessage, "PQresultErrorMessage");
    RESOLVE(resultErrorField, "PQresultErrorField");
    RESOLVE(ntuples, "PQntuples");
    RESOLVE(nfields, "PQnfields");
    RESOLVE(getvalue, "PQgetvalue");
    RESOLVE(getisnull, "PQgetisnull");
    RESOLVE(cmdTuples, "PQcmdTuples");
    RESOLVE(clear, "PQclear");
#undef RESOLVE
    if (!pq.connectdb || !pq.status || !pq.errorMessage || !pq.finish || !pq.execParams || !pq.resultStatus
        || !pq.resultErrorMessage || !pq.resultErrorField || !pq.ntuples || !pq.nfields || !pq.getvalue || !pq.getisnull
        || !pq.cmdTuples || !pq.clear) {
        snprintf(pq.problem, sizeof pq.problem, "libpq.so.5 lacks a function keepalive uses");
        pq.handle = NULL;
    }
}

const char *keepalive_libpq_problem(void) {
    pthread_once(&loaded, load);
    return pq.handle ? NULL : pq.problem;
}

PGconn *PQconnectdb(const char *conninfo) { return keepalive_libpq_problem() ? NULL : pq.connectdb(conninfo); }
ConnStatusType PQstatus(const PGconn *conn) { return keepalive_libpq_problem() ? CONNECTION_BAD : pq.status(conn); }
char *PQerrorMessage(const PGconn *conn) { return keepalive_libpq_problem() ? pq.problem : pq.errorMessage(conn); }
void PQfinish(PGconn *conn) {
    if (!keepalive_libpq_problem()) pq.finish(conn);
}
PGresult *PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues,
                       const int *paramLengths, const int *paramFormats, int resultFormat) {
    if (keepalive_libpq_problem()) return NULL;
    return pq.execParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat);
}
ExecStatusType PQresultStatus(const PGresult *res) { return keepalive_libpq_problem() ? PGRES_FATAL_ERROR : pq.resultStatus(res); }
char *PQresultErrorMessage(const PGresult *res) { return keepalive_libpq_problem() ? pq.problem : pq.resultErrorMessage(res); }
char *PQresultErrorField(const PGresult *res, int fieldcode) { return keepalive_libpq_problem() ? NULL : pq.resultErrorField(res, fieldcode); }
int PQntuples(const PGresult *res) { return keepalive_libpq_problem() ? 0 : pq.ntuples(res); }
int PQnfields(const PGresult *res) { return keepalive_libpq_problem() ? 0 : pq.nfields(res); }
char *PQgetvalue(const PGresult *res, int row, int field) { return keepalive_libpq_problem() ? pq.problem : pq.getvalue(res, row, field); }
int PQgetisnull(const PGresult *res, int row, int field) { return keepalive_libpq_problem() ? 1 : pq.getisnull(res, row, field); }
char *PQcmdTuples(PGresult *res) { return keepalive_libpq_problem() ? pq.problem : pq.cmdTuples(res); }
void PQclear(PGresult *res) {
    if (!keepalive_libpq_problem()) pq.clear(res);
}
