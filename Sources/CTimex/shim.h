// ntp_adjtime and STA_UNSYNC: whether the kernel's clock is synchronised (Runtime/SystemClock.swift).
#include <sys/timex.h>
