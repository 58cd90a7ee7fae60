// O_DIRECT, which Swift's Glibc module leaves out (it needs _GNU_SOURCE): the ingest journal's
// slots bypass the page cache (Store/JournalFile.swift). Its value differs between x86_64 and
// arm64, so it comes from the C library's own header rather than a literal.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>

static const int keepalive_o_direct = O_DIRECT;
