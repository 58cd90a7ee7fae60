import Foundation

/// A fresh directory under $TMPDIR for one test; removed when the value goes away.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(_ label: String = "keepalive-test") throws {
        let base = NSTemporaryDirectory().hasSuffix("/") ? NSTemporaryDirectory() : NSTemporaryDirectory() + "/"
        var template = Array("\(base)\(label).XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw POSIXError(.EIO) }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }

    public func write(_ name: String, _ text: String) throws -> String {
        let target = file(name)
        try text.write(toFile: target, atomically: true, encoding: .utf8)
        return target
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
