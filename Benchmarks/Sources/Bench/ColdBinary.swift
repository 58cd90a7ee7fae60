import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program's file dropped from the page cache before it is launched, so that the kernel reads
/// it from disk as a Pi does after boot. A binary the linker or `cp` has just written sits in the
/// page cache in the large blocks the write made, and the kernel maps such a block whole when
/// code in it runs: the same query measured 25.1–26.1 MiB peak RSS so, against 23.2–23.8 MiB read
/// from disk, across four builds (docs/figures.md, "Seventh step"). That surplus is file-backed,
/// differs from build to build, and is not what an installed agent carries.
/// `KEEPALIVE_BENCH_BINARY_CACHE=warm` leaves the page cache as it is.
enum ColdBinary {
    static var requested: Bool { ProcessInfo.processInfo.environment["KEEPALIVE_BENCH_BINARY_CACHE"] != "warm" }

    /// Pages a running process maps stay: only the file's other pages go.
    static func evict(_ path: String) {
        #if canImport(Glibc)
        guard requested else { return }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
        #endif
    }
}
