import Foundation

/// Which files a store path and its `-wal` and `-shm` name: device and inode of each.
struct FileIdentity: Equatable, Sendable {
    struct Node: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64

        /// nil when `path` names no file (or cannot be looked at).
        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    var main: Node?
    var wal: Node?
    var shm: Node?

    init(path: String) {
        main = Node(path: path)
        wal = Node(path: path + "-wal")
        shm = Node(path: path + "-shm")
    }
}
