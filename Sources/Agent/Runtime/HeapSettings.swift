#if canImport(Glibc)
import CMalloc
import Glibc
#endif

/// glibc's allocator settings for a long-running agent on a small board (issue 32).
///
/// By default glibc gives each thread that allocates its own arena (up to eight per core) and,
/// once a large block has been freed, raises its mmap threshold to as much as 32 MiB, so the
/// arrays a backlog's rounds grow and free come from the arenas and stay resident after they are
/// freed. Measured with a 1 000 000-notification backlog (docs/figures.md, "Fifth step"): anon
/// memory 64 MiB where heaptrack counted a 28 MiB live peak. With blocks over 128 KiB mapped
/// and unmapped on their own, freed tops of the heap returned past 128 KiB, and two arenas, the
/// agent's peak fell by about a quarter at no measured cost in time. A `MALLOC_*` environment
/// variable (mallopt(3)) the owner set still wins.
enum HeapSettings {
    static let largeBlockBytes: Int32 = 128 * 1024
    static let arenas: Int32 = 2

    static func apply() {
        #if canImport(Glibc)
        func unset(_ name: String) -> Bool { getenv(name) == nil }
        if unset("MALLOC_MMAP_THRESHOLD_") { _ = mallopt(M_MMAP_THRESHOLD, largeBlockBytes) }
        if unset("MALLOC_TRIM_THRESHOLD_") { _ = mallopt(M_TRIM_THRESHOLD, largeBlockBytes) }
        if unset("MALLOC_ARENA_MAX") { _ = mallopt(M_ARENA_MAX, arenas) }
        #endif
    }
}
