import Foundation

/// A system call on the ingest journal's file failed (JournalFile.swift): which, on which file,
/// and the `errno` it left — a file error, not SQLite's. The writer treats it as any other
/// failed write (the samples stay in memory and are retried; `status` shows the text).
public struct JournalFileError: Error, CustomStringConvertible, Equatable {
    /// What was being done: "open", "write", "sync", …
    public let operation: String
    public let path: String
    public let errno: Int32

    public init(operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String { "ingest journal \(path): \(operation): \(String(cString: strerror(errno)))" }
}
