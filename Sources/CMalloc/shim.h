// mallopt and its M_* settings: glibc's allocator tuned for the agent (Agent/Runtime/HeapSettings.swift).
#include <malloc.h>
