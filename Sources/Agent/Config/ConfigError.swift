/// A configuration problem: one message that names the key (`mqtt.port`) and, where the
/// file shows it, the line. `keepalive run` and `check-config` exit 78 (EX_CONFIG) on it.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    public let file: String
    public let key: String?
    public let line: Int?
    public let message: String

    public init(file: String, key: String? = nil, line: Int? = nil, message: String) {
        self.file = file
        self.key = key
        self.line = line
        self.message = message
    }

    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let key { return "\(place): \(key): \(message)" }
        return "\(place): \(message)"
    }

    /// sysexits.h EX_CONFIG.
    public static let exitCode: Int32 = 78
}
