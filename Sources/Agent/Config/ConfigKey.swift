import Foundation

/// One key of `config.toml`, declared once: its section and name, how it is read (type, default,
/// allowed range, through `ConfigSection`, which names the key and its line in every error),
/// where its value goes in `AgentConfig`, and how `check-config` prints it. The loader, the
/// summary and the test that config.toml documents every key all read `ConfigKeys.all`.
struct ConfigKey {
    let section: String
    let name: String
    /// Reads the key (its default when absent) into `config`.
    let read: (ConfigSection, inout AgentConfig) throws -> Void
    /// The configured value as TOML.
    let render: (AgentConfig) -> String

    static func string(_ section: String, _ name: String, _ path: WritableKeyPath<AgentConfig, String>, default value: String) -> ConfigKey {
        ConfigKey(section: section, name: name, read: { $1[keyPath: path] = try $0.string(name, default: value) }, render: { quoted($0[keyPath: path]) })
    }

    static func bool(_ section: String, _ name: String, _ path: WritableKeyPath<AgentConfig, Bool>, default value: Bool) -> ConfigKey {
        ConfigKey(section: section, name: name, read: { $1[keyPath: path] = try $0.bool(name, default: value) }, render: { "\($0[keyPath: path])" })
    }

    static func int(
        _ section: String, _ name: String, _ path: WritableKeyPath<AgentConfig, Int>, default value: Int, in range: ClosedRange<Int>
    ) -> ConfigKey {
        ConfigKey(section: section, name: name, read: { $1[keyPath: path] = try $0.int(name, default: value, in: range) }, render: { "\($0[keyPath: path])" })
    }

    static func double(
        _ section: String, _ name: String, _ path: WritableKeyPath<AgentConfig, Double>, default value: Double, in range: ClosedRange<Double>
    ) -> ConfigKey {
        ConfigKey(
            section: section, name: name, read: { $1[keyPath: path] = try $0.double(name, default: value, in: range) },
            render: { "\($0[keyPath: path])" })
    }

    static func strings(_ section: String, _ name: String, _ path: WritableKeyPath<AgentConfig, [String]>, default value: [String]) -> ConfigKey {
        ConfigKey(
            section: section, name: name, read: { $1[keyPath: path] = try $0.stringArray(name, default: value) },
            render: { "[" + $0[keyPath: path].map(quoted).joined(separator: ", ") + "]" })
    }

    static func choice<Choice: RawRepresentable & CaseIterable>(
        _ section: String, _ name: String, _ path: WritableKeyPath<AgentConfig, Choice>, default value: Choice
    ) -> ConfigKey where Choice.RawValue == String {
        ConfigKey(section: section, name: name, read: { $1[keyPath: path] = try $0.choice(name, default: value) }, render: { quoted($0[keyPath: path].rawValue) })
    }

    static func quoted(_ value: String) -> String { "\"\(value.replacingOccurrences(of: "\"", with: "\\\""))\"" }
}
