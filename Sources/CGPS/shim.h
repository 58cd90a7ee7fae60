#include <gps.h>
