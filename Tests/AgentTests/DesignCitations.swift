import Foundation

/// The files docs/design.md cites, found the way a reader would look for them, so that the walk
/// through the code it gives cannot silently point at files that were renamed or removed.
///
/// A citation is one of:
/// - a path from the package root anywhere in the text (`Sources/…`, `Tests/…`, `Benchmarks/…`,
///   `deploy/…`, `scripts/…`, `docs/…`);
/// - a Swift file in backticks given under its folder (`GPS/GPSReader.swift`, `Store/Store+Ingest.swift`):
///   looked for under Sources/Agent, Sources, Tests and Benchmarks/Sources;
/// - a bare Swift file name in backticks (`RecordColumns.swift`): some file of that name in the package;
/// - a relative Markdown link (`[storage.md](storage.md)`): next to design.md.
struct DesignCitations {
    struct Citation: Equatable, CustomStringConvertible {
        let line: Int
        let text: String
        var description: String { "line \(line): \(text)" }
    }

    static let rootFolders = ["Sources", "Tests", "Benchmarks", "deploy", "scripts", "docs"]
    /// Where a `Folder/File.swift` citation may live, in the order a reader would look.
    static let swiftBases = ["Sources/Agent", "Sources", "Tests", "Benchmarks/Sources"]

    let root: String
    let document: String

    /// Every citation in the document, in order of appearance, each once per line.
    func citations() throws -> [Citation] {
        // Preceded by nothing that would make it the tail of a longer path (no lookbehind needed).
        let rootPath = try Regex(#"(?:^|[^\w/.+-])((?:"# + Self.rootFolders.joined(separator: "|") + #")/[\w+./-]*)"#)
        let backticked = try Regex(#"`([^`\n]+)`"#)
        let link = try Regex(#"\]\(([^)\s#]+)(?:#[^)]*)?\)"#)
        var found: [Citation] = []
        for (index, line) in document.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var seen = Set<String>()
            func add(_ text: String) {
                let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: ".,;:"))
                if !trimmed.isEmpty, seen.insert(trimmed).inserted { found.append(Citation(line: index + 1, text: trimmed)) }
            }
            for match in line.matches(of: rootPath) { if let path = match.output[1].substring { add(String(path)) } }
            for match in line.matches(of: backticked) {
                guard let span = match.output[1].substring,
                      let first = span.split(separator: " ").first.map(String.init), first.hasSuffix(".swift") else { continue }
                add(first)
            }
            for match in line.matches(of: link) {
                guard let target = match.output[1].substring, !target.contains(":") else { continue }
                add("docs/" + target)
            }
        }
        return found
    }

    /// The citations that name no file or folder of the package.
    func missing() throws -> [Citation] {
        try citations().filter { !resolves($0.text) }
    }

    private func resolves(_ path: String) -> Bool {
        let manager = FileManager.default
        if let folder = path.split(separator: "/").first, Self.rootFolders.contains(String(folder)) {
            return manager.fileExists(atPath: "\(root)/\(path)")
        }
        if path.contains("/") {
            return Self.swiftBases.contains { manager.fileExists(atPath: "\(root)/\($0)/\(path)") }
        }
        return Self.swiftBases.dropFirst().contains { base in
            guard let files = manager.enumerator(atPath: "\(root)/\(base)") else { return false }
            for case let file as String in files where (file as NSString).lastPathComponent == path { return true }
            return false
        }
    }
}
