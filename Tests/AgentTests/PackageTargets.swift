import Foundation
import TestKit

/// Package.swift's targets and what each depends on (targets and products alike, by name), as
/// `swift package dump-package` reports them.
enum PackageTargets {
    private struct Manifest: Decodable {
        struct Target: Decodable {
            let name: String
            /// Each dependency is one case (`byName`, `target`, `product`) whose first element is its name.
            let dependencies: [[String: [NameOrOther]]]
        }
        let targets: [Target]
    }

    private enum NameOrOther: Decodable {
        case name(String)
        case other
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            self = (try? container.decode(String.self)).map(NameOrOther.name) ?? .other
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Target name → the names of the modules it depends on.
    static func load(root: String) async throws -> [String: Set<String>] {
        // A scratch path of its own: the package's .build is locked by the `swift test` running this.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("dump-package-\(UUID().uuidString)").path
        let json = scratch + ".json"
        defer {
            try? FileManager.default.removeItem(atPath: scratch)
            try? FileManager.default.removeItem(atPath: json)
        }
        let swift = Tools.find("swift", in: ["/opt/swift/usr/bin"])
        let dump = try ManagedProcess(
            name: "swift package dump-package", executable: "/bin/sh",
            arguments: ["-c", "exec \"$0\" package --package-path \"$1\" --scratch-path \"$2\" dump-package > \"$3\"", swift, root, scratch, json])
        guard await dump.waitForExit(timeout: 120) == 0 else {
            throw Failure(description: "swift package dump-package failed:\n\(dump.text)")
        }
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        var targets: [String: Set<String>] = [:]
        for target in manifest.targets {
            targets[target.name] = Set(target.dependencies.compactMap { dependency -> String? in
                guard case .name(let name)? = dependency.values.first?.first else { return nil }
                return name
            })
        }
        return targets
    }
}
