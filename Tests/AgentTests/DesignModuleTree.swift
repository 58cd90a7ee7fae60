import Foundation

/// The module tree at the top of docs/design.md, read as a reader would: under `Sources/` and
/// `Tests/`, each entry indented by two spaces names one or more targets (`Store/`,
/// `AgentTests, FaultTests`) and ends with `uses:` and the modules they depend on (`nothing` for
/// none); lines indented further continue the entry. An entry that says `not a target` (a data
/// folder) is left out.
struct DesignModuleTree {
    struct ParseError: Error, CustomStringConvertible {
        let description: String
    }

    /// Target name → the modules design.md says it uses.
    let uses: [String: Set<String>]

    init(document: String) throws {
        guard let block = document.components(separatedBy: "```\nSources/\n").dropFirst().first?.components(separatedBy: "\n```").first else {
            throw ParseError(description: "no module tree (a code block starting with `Sources/`) in docs/design.md")
        }
        // Each entry: its first line (where the names are) and its whole text.
        var entries: [(first: String, text: String)] = []
        var counted = true
        for line in ("Sources/\n" + block).split(separator: "\n") {
            if !line.hasPrefix(" ") {
                counted = line.hasPrefix("Sources/") || line.hasPrefix("Tests/")
                entries.append(("", ""))
            } else if line.hasPrefix("  "), !line.hasPrefix("   ") {
                let text = counted ? String(line.dropFirst(2)) : ""
                entries.append((text, text))
            } else if let last = entries.indices.last, !entries[last].text.isEmpty {
                entries[last].text += " " + line.trimmingCharacters(in: .whitespaces)
            }
        }
        var uses: [String: Set<String>] = [:]
        for (first, entry) in entries where !entry.isEmpty && !entry.contains("not a target") {
            // The names run up to the first gap of two spaces (or the whole first line).
            let head = first.components(separatedBy: "  ").first ?? first
            guard let range = entry.range(of: "uses:", options: .backwards) else {
                throw ParseError(description: "design.md's module tree: `\(head)` ends with no `uses:`")
            }
            let named = entry[range.upperBound...].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let dependencies = Set(named == ["nothing"] ? [] : named)
            for name in head.split(separator: ",") {
                let target = name.trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "/")))
                guard target.wholeMatch(of: /[A-Za-z][A-Za-z0-9]*/) != nil else {
                    throw ParseError(description: "design.md's module tree: `\(head)` is not a list of names; end the names with two spaces")
                }
                if uses[target] != nil { throw ParseError(description: "design.md's module tree names \(target) twice") }
                uses[target] = dependencies
            }
        }
        self.uses = uses
    }

    /// Each way the tree and the package differ, one line each, empty when they agree.
    func differences(from package: [String: Set<String>]) -> [String] {
        var lines: [String] = []
        for target in package.keys.sorted() where uses[target] == nil {
            lines.append("\(target): a target of Package.swift, missing from the tree")
        }
        for target in uses.keys.sorted() {
            guard let real = package[target] else {
                lines.append("\(target): in the tree, not a target of Package.swift")
                continue
            }
            let said = uses[target] ?? []
            if said != real {
                lines.append("\(target): the tree says uses: \(Self.list(said)); Package.swift says \(Self.list(real))")
            }
        }
        return lines
    }

    private static func list(_ names: Set<String>) -> String {
        names.isEmpty ? "nothing" : names.sorted().joined(separator: ", ")
    }
}
