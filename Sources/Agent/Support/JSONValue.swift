import Foundation

/// A JSON document built in code: keys keep their order (`_type` first, as OwnTracks writes it),
/// `null` is explicit (the contract says null where there is no data), numbers print plainly.
public indirect enum JSONValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// JSON text written as it is: a stored payload spliced into a reply without parsing it.
    case raw(String)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(Int64(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }

    public static func number(_ value: Int?) -> JSONValue { value.map { .int(Int64($0)) } ?? .null }
    public static func number(_ value: Int64?) -> JSONValue { value.map { .int($0) } ?? .null }
    /// A finite double rounded to `digits` decimals; NaN and infinities become null.
    public static func number(_ value: Double?, digits: Int = 6) -> JSONValue {
        guard let value, value.isFinite else { return .null }
        let scale = pow(10, Double(digits))
        return .double((value * scale).rounded() / scale)
    }
    public static func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.elementsEqual(b) { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.raw(let a), .raw(let b)): a == b
        default: false
        }
    }

    /// Compact JSON text.
    public var text: String {
        var output = ""
        write(to: &output)
        return output
    }

    public var bytes: [UInt8] { Array(text.utf8) }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .double(let value):
            if value == value.rounded(), abs(value) < 1e15 {
                output += String(Int64(value))
            } else {
                output += "\(value)"
            }
        case .string(let value): Self.writeString(value, to: &output)
        case .raw(let text): output += text
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(key, to: &output)
                output += ":"
                value.write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ value: String, to output: inout String) {
        // Most strings (keys, dates, zone names) need no escaping: appended whole.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            output += "\""
            output += value
            output += "\""
            return
        }
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20: output += String(format: "\\u%04x", scalar.value)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension JSONValue {
    /// ISO-8601 in UTC with milliseconds, the form every timestamp in a payload takes.
    public static func timestamp(_ date: Date) -> JSONValue { .string(ISO8601.format(date)) }
}

public enum ISO8601 {
    /// `2026-11-21T08:00:01.000Z`. By hand with gmtime_r: a formatter per call is slow for the
    /// hundred thousand timestamps of an export, and formatters are not safe to share.
    public static func format(_ date: Date) -> String {
        let totalMs = date.unixMs
        var seconds = time_t(totalMs >= 0 ? totalMs / 1000 : (totalMs - 999) / 1000)
        let ms = Int(totalMs - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), ms)
    }

    /// Local time with its offset, whole seconds, e.g. `2026-03-29T00:00:00+01:00` (a local day's
    /// bounds, sleep onset). By hand from the zone's offset: a `DateFormatter` pages in ~6 MiB of
    /// ICU's data for a pattern (issue 32, memory).
    public static func formatLocal(_ date: Date, timeZone: TimeZone) -> String {
        let offset = timeZone.secondsFromGMT(for: date)
        var seconds = time_t((date.timeIntervalSince1970).rounded(.down)) + time_t(offset)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        let yearText = year >= 0 && year < 1000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        let magnitude = abs(offset)
        return "\(yearText)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
            + "\(offset < 0 ? "-" : "+")\(two(Int32(magnitude / 3600))):\(two(Int32(magnitude / 60 % 60)))"
    }
}
