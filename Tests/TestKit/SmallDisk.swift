import Foundation

/// A small tmpfs (needs root, as these test machines are) to fill up on purpose.
public final class SmallDisk: Sendable {
    public let path: String
    private let directory: TemporaryDirectory

    public init(megabytes: Int) async throws {
        directory = try TemporaryDirectory("smalldisk")
        path = directory.path
        let mount = try ManagedProcess(name: "mount", executable: Tools.find("mount"),
                                       arguments: ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        guard await mount.waitForExit(timeout: 10) == 0 else { throw WaitTimeout(description: "mount tmpfs failed: \(mount.text)") }
    }

    /// Writes a filler file until the disk is full.
    public func fill() throws {
        let fd = open(path + "/filler", O_WRONLY | O_CREAT, 0o644)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0xAB, count: 4096)
        while write(fd, chunk, chunk.count) > 0 {}
    }

    public func free() {
        unlink(path + "/filler")
    }

    deinit {
        // The system call, not umount(8): stopping that process (SIGTERM) could cut it short and
        // leave the tmpfs mounted, holding its memory. MNT_DETACH: even while a file is still open.
        // (An init that failed to mount never gets here.)
        umount2(path, Int32(MNT_DETACH))
    }
}
