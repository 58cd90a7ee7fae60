import CDirectIO
import Foundation

/// The ingest journal's ring on disk: `<store>-ingest`, next to the store file, `slots` slots of
/// `slotSize` (4 KiB) each, written in place and made durable with `fdatasync`.
///
/// Why a file of its own and not a table: a 1 Hz commit to SQLite appends a 536-byte WAL frame,
/// which straddles two 4 KiB pages of the card one commit in eight, and updates the `-shm`
/// wal-index, whose pages the kernel writes back every half minute. A slot here is one 4 KiB
/// block at a 4 KiB offset: a window costs the card one block, the floor (docs/storage.md,
/// "SD-card wear"). The file is made full-size once, so writing a slot never changes its size or
/// allocation and `fdatasync` writes the data alone.
///
/// Slots are written with O_DIRECT, past the page cache: a cached file can sit in folios larger
/// than 4 KiB (the kernel makes them for large reads and writes), and a write into one dirties,
/// and writes back, all of it — measured 64 KiB per 512-byte slot on ext4 before this. Where the
/// filesystem refuses O_DIRECT (tmpfs) the slots go through the cache.
///
/// A slot is a CRC-32 of the body, then the body (`JournalEntry`). A slot torn by a power cut
/// during its write fails the check and is skipped: its window had not been reported stored,
/// because `write` returns after `fdatasync`. Not thread-safe: `IngestRing`, inside the `Store`
/// actor, owns it.
final class JournalFile {
    static let slotSize = 4096
    static let bodySize = slotSize - 4

    let path: String
    let slots: Int
    /// Whether slots bypass the page cache (false where the filesystem refuses O_DIRECT).
    private(set) var direct: Bool
    private let descriptor: Int32
    /// `synchronous = "normal"`: like SQLite's WAL then, a write is not synced by itself.
    private let syncsEachWrite: Bool
    /// O_DIRECT wants the memory, the offset and the length aligned to the device's blocks.
    private let buffer: UnsafeMutableRawBufferPointer

    /// What `read` found: the bodies of the slots whose check passed, by slot; how many slots
    /// failed it though written (not all zeros: torn by a power cut, or damaged); and whether the
    /// file is a ring this code writes (false: missing, or another size — `make` it).
    struct Contents {
        var bodies: [(slot: Int, body: [UInt8])]
        var damaged: Int
        var isRing: Bool
    }

    /// Opens the ring at `path` (creating an empty file). Throws when another process holds it
    /// (a second agent on the same store).
    init(path: String, slots: Int, syncsEachWrite: Bool) throws {
        self.path = path
        self.slots = slots
        self.syncsEachWrite = syncsEachWrite
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | keepalive_o_direct, 0o640)
        direct = fd >= 0
        if fd < 0, errno == EINVAL { fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640) }
        guard fd >= 0 else { throw Self.error("open", path: path) }
        descriptor = fd
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failure = Self.error("lock (another keepalive on the same store?)", path: path)
            close(fd)
            throw failure
        }
        buffer = .allocate(byteCount: Self.slotSize, alignment: Self.slotSize)
    }

    deinit {
        close(descriptor)
        buffer.deallocate()
    }

    /// Whether the path still names the file this has open (not deleted, not replaced).
    var isAtItsPath: Bool {
        var held = stat()
        var named = stat()
        guard fstat(descriptor, &held) == 0, stat(path, &named) == 0 else { return false }
        return held.st_dev == named.st_dev && held.st_ino == named.st_ino
    }

    /// The slots whose check passes, whatever the file's size.
    func read() throws -> Contents {
        // Read through the cache, on a descriptor of its own: O_DIRECT reads want aligned memory.
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw Self.error("open", path: path) }
        defer { close(reader) }
        var status = stat()
        guard fstat(reader, &status) == 0 else { throw Self.error("stat", path: path) }
        let size = Int(status.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        let read = bytes.withUnsafeMutableBytes { pread(reader, $0.baseAddress, size, 0) }
        guard read == size else { throw Self.error("read", path: path) }
        let bodies = Self.checkedBodies(bytes)
        let written = (0..<(size / Self.slotSize)).count(where: { slot in
            bytes[(slot * Self.slotSize)..<((slot + 1) * Self.slotSize)].contains { $0 != 0 }
        })
        return Contents(bodies: bodies, damaged: written - bodies.count, isRing: size == slots * Self.slotSize)
    }

    /// The slots of a ring read whole whose check passes, by slot.
    static func checkedBodies(_ bytes: [UInt8]) -> [(slot: Int, body: [UInt8])] {
        var bodies: [(slot: Int, body: [UInt8])] = []
        for slot in 0..<(bytes.count / slotSize) {
            let start = slot * slotSize
            let stored = UInt32(bytes[start]) | UInt32(bytes[start + 1]) << 8 | UInt32(bytes[start + 2]) << 16 | UInt32(bytes[start + 3]) << 24
            let body = Array(bytes[(start + 4)..<(start + slotSize)])
            if CRC32.checksum(body) == stored { bodies.append((slot, body)) }
        }
        return bodies
    }

    /// Writes `body` (`bodySize` bytes) to `slot` with its check, durably.
    func write(slot: Int, body: [UInt8]) throws {
        guard body.count == Self.bodySize, (0..<slots).contains(slot) else {
            throw JournalFileError(operation: "write slot \(slot) of \(slots), a body of \(body.count) bytes", path: path, errno: EINVAL)
        }
        let check = CRC32.checksum(body)
        for index in 0..<4 { buffer[index] = UInt8(truncatingIfNeeded: check >> (8 * UInt32(index))) }
        for (index, byte) in body.enumerated() { buffer[4 + index] = byte }
        try writeBuffer(at: slot * Self.slotSize)
        if syncsEachWrite, fdatasync(descriptor) != 0 { throw Self.error("sync", path: path) }
    }

    private func writeBuffer(at offset: Int) throws {
        var written = pwrite(descriptor, buffer.baseAddress, Self.slotSize, off_t(offset))
        // A filesystem that opened the file with O_DIRECT but will not write it so: through the
        // cache from now on.
        if written < 0, errno == EINVAL, direct {
            direct = false
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~keepalive_o_direct)
            written = pwrite(descriptor, buffer.baseAddress, Self.slotSize, off_t(offset))
        }
        guard written == Self.slotSize else { throw Self.error("write", path: path) }
    }

    /// The ring, empty: zeros, full size, written (not a sparse file: no block is allocated later,
    /// when a slot is written) and synced, then its directory entry.
    func make() throws {
        guard ftruncate(descriptor, 0) == 0 else { throw Self.error("truncate", path: path) }
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        for slot in 0..<slots { try writeBuffer(at: slot * Self.slotSize) }
        guard fsync(descriptor) == 0 else { throw Self.error("sync", path: path) }
        let directory = (path as NSString).deletingLastPathComponent
        let handle = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if handle >= 0 {
            _ = fsync(handle)
            close(handle)
        }
    }

    /// The call that failed, with the `errno` it left.
    private static func error(_ operation: String, path: String) -> JournalFileError {
        JournalFileError(operation: operation, path: path, errno: errno)
    }
}
