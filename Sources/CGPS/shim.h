#include <gps.h>
#include <sys/timex.h>
