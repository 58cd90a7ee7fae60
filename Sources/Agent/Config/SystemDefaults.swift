import Foundation

/// What the defaults of `[device]` come from: the machine's hostname and time zone.
public struct SystemDefaults: Sendable {
    public var deviceID: String
    public var timezone: String

    public init(deviceID: String, timezone: String) {
        self.deviceID = deviceID
        self.timezone = timezone
    }

    public static var current: SystemDefaults {
        SystemDefaults(deviceID: hostnameLevel(), timezone: systemTimezone())
    }

    /// The short hostname, made safe as one MQTT topic level.
    static func hostnameLevel() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "keepalive" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let short = name.split(separator: ".").first.map(String.init) ?? ""
        let safe = String(short.map { "/+#".contains($0) ? "-" : $0 })
        return safe.isEmpty ? "keepalive" : safe
    }

    /// The zone the system is set to (`timedatectl set-timezone`), as an IANA name.
    static func systemTimezone() -> String {
        if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/etc/localtime"),
            let range = link.range(of: "zoneinfo/")
        {
            let name = String(link[range.upperBound...])
            if TimeZone(identifier: name) != nil { return name }
        }
        if let text = try? String(contentsOfFile: "/etc/timezone", encoding: .utf8) {
            let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if TimeZone(identifier: name) != nil { return name }
        }
        return TimeZone.current.identifier
    }
}
