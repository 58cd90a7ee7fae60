import Foundation
import Testing
import TestKit

/// The layout rules of docs/design.md, held: its module tree is Package.swift's targets, no
/// folder of Sources/Agent uses one that uses it back, the graph in design.md is the one the
/// script makes today, every file design.md cites exists, and no source file outgrows 400 lines.
@Suite("Code structure")
struct StructureTests {
    @Test("no folder cycle inside Agent")
    func noFolderCycle() async throws {
        let check = try ManagedProcess(name: "agent-graph", executable: Tools.find("python3"), arguments: ["\(Tools.packageRoot)/scripts/agent-graph.py"])
        #expect(await check.waitForExit(timeout: 60) == 0, "folder cycles:\n\(check.text)")
    }

    @Test("docs/design.md shows the graph scripts/agent-graph.py makes")
    func folderGraphShown() async throws {
        let root = Tools.packageRoot
        let mermaid = try ManagedProcess(
            name: "agent-graph --mermaid", executable: Tools.find("python3"), arguments: ["\(root)/scripts/agent-graph.py", "--mermaid"])
        #expect(await mermaid.waitForExit(timeout: 60) == 0)
        let design = try String(contentsOfFile: "\(root)/docs/design.md", encoding: .utf8)
        let shown = try #require(design.components(separatedBy: "<!-- agent-graph:begin -->").last?.components(separatedBy: "<!-- agent-graph:end -->").first)
        #expect(shown.trimmingCharacters(in: .whitespacesAndNewlines) == mermaid.text.trimmingCharacters(in: .whitespacesAndNewlines),
                "docs/design.md's graph is out of date: run scripts/agent-graph.py --mermaid and paste it in")
    }

    @Test("every file docs/design.md cites exists")
    func designCitationsExist() throws {
        let root = Tools.packageRoot
        let citations = DesignCitations(root: root, document: try String(contentsOfFile: "\(root)/docs/design.md", encoding: .utf8))
        // The walk through the code cites dozens of files: finding none means the parser broke, not that all is well.
        let cited = try citations.citations()
        #expect(cited.count > 40, "found only \(cited) in docs/design.md")
        let missing = try citations.missing()
        #expect(missing.isEmpty, "docs/design.md cites files that do not exist; rename them there or restore them:\n\(missing.map(\.description).joined(separator: "\n"))")
    }

    @Test("only the cited files that do not exist are named, each with its line")
    func designCitationsMissing() throws {
        let document = """
            `Store/Store.swift`, `GPS/GPSReader.swift` and `RecordColumns.swift` exist,
            `Sources/Nowhere.swift`, `GPS/Gone.swift` and `Vanished.swift` do not;
            nor does [a page](nowhere.md), but [this one](design.md#one-clock) does.
            """
        let missing = try DesignCitations(root: Tools.packageRoot, document: document).missing()
        #expect(missing.map(\.description) == [
            "line 2: Sources/Nowhere.swift", "line 2: GPS/Gone.swift", "line 2: Vanished.swift", "line 3: docs/nowhere.md",
        ])
    }

    @Test("docs/design.md's module tree names every target of Package.swift with what it uses, and nothing else")
    func moduleTreeIsPackage() async throws {
        let root = Tools.packageRoot
        let tree = try DesignModuleTree(document: String(contentsOfFile: "\(root)/docs/design.md", encoding: .utf8))
        let package = try await PackageTargets.load(root: root)
        // An empty manifest would agree with an empty tree: both must hold the package's core.
        #expect(package["Agent"]?.contains("Store") == true, "dump-package gave \(package)")
        let differences = tree.differences(from: package)
        #expect(differences.isEmpty, "docs/design.md's module tree differs from Package.swift; fix the tree:\n\(differences.joined(separator: "\n"))")
    }

    @Test("the module tree's reading: entries, continued lines, several names, `nothing`, data folders")
    func moduleTreeReading() throws {
        let document = """
            ```
            Sources/
              CA, CB       C headers; uses: nothing
              Core/        the core, described
                           at length; uses: CA, Logging
            Benchmarks/    a package of its own; uses: Core
            Tests/
              Fixtures/    not a target: data
              CoreTests    uses: Core
            ```
            """
        let tree = try DesignModuleTree(document: document)
        #expect(tree.uses == ["CA": [], "CB": [], "Core": ["CA", "Logging"], "CoreTests": ["Core"]])
        let package: [String: Set<String>] = ["CA": [], "Core": ["CA"], "CoreTests": ["Core"], "Extra": []]
        #expect(tree.differences(from: package) == [
            "Extra: a target of Package.swift, missing from the tree",
            "CB: in the tree, not a target of Package.swift",
            "Core: the tree says uses: CA, Logging; Package.swift says CA",
        ])
    }

    @Test("no type under Tests/ opts out of the compiler's Sendable check or locks by hand: state is in a Mutex, as in Sources")
    func testsUseMutex() throws {
        // Spelled in two halves so that this file does not name them itself.
        let forbidden = ["@unchecked" + " Sendable", "NS" + "Lock", "NS" + "Condition"]
        var found: [String] = []
        let base = "\(Tools.packageRoot)/Tests"
        guard let files = FileManager.default.enumerator(atPath: base) else { return }
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: "\(base)/\(file)", encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where forbidden.contains(where: line.contains) {
                found.append("Tests/\(file):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found.isEmpty, "keep shared state in a Synchronization.Mutex (docs/design.md, \"Threads and ownership\"):\n\(found.joined(separator: "\n"))")
    }

    @Test("no source file over 400 lines")
    func fileSizes() throws {
        var long: [String] = []
        for directory in ["Sources", "Benchmarks/Sources"] {
            let base = "\(Tools.packageRoot)/\(directory)"
            guard let files = FileManager.default.enumerator(atPath: base) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let lines = try String(contentsOfFile: "\(base)/\(file)", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count
                if lines > 400 { long.append("\(directory)/\(file): \(lines)") }
            }
        }
        #expect(long.isEmpty, "split these by concern: \(long)")
    }
}
