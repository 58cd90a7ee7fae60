import Foundation
import TOMLKit

/// Reads the keys of one `[section]`, each with its default, type and range, and remembers
/// which keys it read so that anything else in the section is reported as unknown.
final class ConfigSection {
    let name: String
    private let table: TOMLTable?
    private let document: ConfigDocument
    private var readKeys: Set<String> = []

    init(name: String, table: TOMLTable?, document: ConfigDocument) {
        self.name = name
        self.table = table
        self.document = document
    }

    func error(_ key: String, _ message: String) -> ConfigError {
        document.error(path: "\(name).\(key)", message)
    }

    private func value(_ key: String) -> TOMLValueConvertible? {
        readKeys.insert(key)
        return table?[key]
    }

    /// Whether the section sets `key` (which then counts as read).
    func contains(_ key: String) -> Bool { value(key) != nil }

    func string(_ key: String, default defaultValue: String) throws -> String {
        guard let raw = value(key) else { return defaultValue }
        guard let string = raw.string else { throw typeError(key, "a string", raw) }
        return string
    }

    func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        guard let raw = value(key) else { return defaultValue }
        guard let bool = raw.bool else { throw typeError(key, "true or false", raw) }
        return bool
    }

    func int(_ key: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let raw = value(key) else { return defaultValue }
        guard let int = raw.int else { throw typeError(key, "an integer", raw) }
        guard range.contains(int) else {
            throw error(key, "must be between \(range.lowerBound) and \(range.upperBound), got \(int)")
        }
        return int
    }

    /// A number of seconds or a rate; an integer is accepted where a fraction is allowed.
    func double(_ key: String, default defaultValue: Double, in range: ClosedRange<Double>) throws -> Double {
        guard let raw = value(key) else { return defaultValue }
        guard let number = raw.double ?? raw.int.map(Double.init) else { throw typeError(key, "a number", raw) }
        guard number.isFinite, range.contains(number) else {
            throw error(key, "must be between \(Self.format(range.lowerBound)) and \(Self.format(range.upperBound)), got \(Self.format(number))")
        }
        return number
    }

    func stringArray(_ key: String, default defaultValue: [String]) throws -> [String] {
        guard let raw = value(key) else { return defaultValue }
        guard let array = raw.array else { throw typeError(key, "an array of strings", raw) }
        var strings: [String] = []
        for element in array {
            guard let string = element.string else { throw typeError(key, "an array of strings", raw) }
            strings.append(string)
        }
        return strings
    }

    func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, default defaultValue: Choice) throws -> Choice
    where Choice.RawValue == String {
        let raw = try string(key, default: defaultValue.rawValue)
        guard let choice = Choice(rawValue: raw) else {
            let allowed = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw error(key, "must be one of \(allowed), got \"\(raw)\"")
        }
        return choice
    }

    /// An inline table of choices by name, e.g. `cadence_units = { "polar-stride" = "strides" }`.
    func choiceTable<Choice: RawRepresentable & CaseIterable>(_ key: String, of type: Choice.Type) throws -> [String: Choice]
    where Choice.RawValue == String {
        guard let raw = value(key) else { return [:] }
        let allowed = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard let table = raw.table else { throw typeError(key, "a table of names to \(allowed)", raw) }
        var choices: [String: Choice] = [:]
        for name in table.keys {
            guard let text = table[name]?.string, let choice = Choice(rawValue: text) else {
                throw error("\(key).\(name)", "must be one of \(allowed)")
            }
            choices[name] = choice
        }
        return choices
    }

    /// Call after every key was read: anything left in the section is a typo or an obsolete key.
    func rejectUnknownKeys() throws {
        guard let table else { return }
        for key in table.keys.sorted() where !readKeys.contains(key) {
            throw error(key, "unknown key in [\(name)]; known keys: \(readKeys.sorted().joined(separator: ", "))")
        }
    }

    private func typeError(_ key: String, _ expected: String, _ raw: TOMLValueConvertible) -> ConfigError {
        error(key, "must be \(expected), got a \(raw.type) (\(raw.debugDescription))")
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}

/// A parsed `config.toml` with the means to name a key and its line in an error.
struct ConfigDocument {
    let file: String
    let root: TOMLTable
    private let locator: TOMLKeyLocator

    init(file: String, text: String) throws {
        self.file = file
        do {
            root = try TOMLTable(string: text)
        } catch let parseError as TOMLParseError {
            throw ConfigError(file: file, line: parseError.source.begin.line, message: "not valid TOML: \(parseError.description)")
        }
        locator = TOMLKeyLocator(text: text)
    }

    func error(path: String, _ message: String) -> ConfigError {
        ConfigError(file: file, key: path, line: locator.line(of: path), message: message)
    }

    func section(_ name: String) throws -> ConfigSection {
        guard let raw = root[name] else { return ConfigSection(name: name, table: nil, document: self) }
        guard let table = raw.table else {
            throw error(path: name, "must be a [\(name)] section, got a \(raw.type)")
        }
        return ConfigSection(name: name, table: table, document: self)
    }

    func rejectUnknownSections(known: [String]) throws {
        for key in root.keys.sorted() where !known.contains(key) {
            throw error(path: key, "unknown section or key at top level; known sections: \(known.map { "[\($0)]" }.joined(separator: ", "))")
        }
    }
}
