import Foundation
import Testing
import TestKit

/// Store.swift's header is the map of the store's files: every `Store+*.swift` extension and
/// every `StoreReader*.swift` is named there, and nothing it names is gone.
@Suite("Store overview")
struct StoreOverviewTests {
    static let folder = "\(Tools.packageRoot)/Sources/Store"

    /// The doc comment above `public actor Store`.
    static func header() throws -> String {
        let source = try String(contentsOfFile: "\(folder)/Store.swift", encoding: .utf8)
        let above = try #require(source.components(separatedBy: "public actor Store").first, "no `public actor Store` in Store.swift")
        return above.split(separator: "\n").filter { $0.hasPrefix("///") }.joined(separator: "\n")
    }

    /// The names (file names without `.swift`) of the store's extension and reader files.
    static func files() throws -> Set<String> {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
            ($0.hasPrefix("Store+") || $0.hasPrefix("StoreReader")) && $0.hasSuffix(".swift")
        }
        return Set(names.map { String($0.dropLast(".swift".count)) })
    }

    /// Every `Store+Name` / `StoreReader` / `StoreReader+Name` the text names.
    static func named(in text: String) -> Set<String> {
        Set(text.matches(of: /\b(Store\+\w+|StoreReader(?:\+\w+)?)/).map { String($0.output.1) })
    }

    @Test("Store.swift's header names every Store+ and StoreReader file, and no other")
    func headerNamesEveryFile() throws {
        let files = try Self.files()
        #expect(files.count > 15, "found only \(files.sorted()) in Sources/Store")
        let named = Self.named(in: try Self.header())
        let unnamed = files.subtracting(named).sorted()
        let gone = named.subtracting(files).sorted()
        #expect(unnamed.isEmpty, "Store.swift's header does not name \(unnamed): add each with what it holds")
        #expect(gone.isEmpty, "Store.swift's header names \(gone), which are not files of Sources/Store")
    }

    @Test("the names are read whole: Store+Name, StoreReader, StoreReader+Name, not the store's other types")
    func namesReadWhole() {
        #expect(Self.named(in: "/// - Store+Ingest: in. Store+Workouts, Store+Gear; StoreReader (read), StoreReader+JSON. StoreError, Store.")
            == ["Store+Ingest", "Store+Workouts", "Store+Gear", "StoreReader", "StoreReader+JSON"])
    }
}
