import Foundation
import Testing
import Store
import TestKit

@testable import Agent

/// The Home Assistant entities are listed in three places: the agent's catalogue (what it
/// announces), docs/contract.md's table (what users read) and scripts/homeassistant/expectations.py
/// (what the Home Assistant check expects, written from the contract). These tests hold the other
/// two to the catalogue, column by column, so that none of the three can drift alone.
@Suite("Home Assistant entity lists")
struct HomeAssistantCatalogListsTests {
    /// One entity as the lists describe it: the columns contract.md's table and expectations.py share.
    struct Row: Equatable, CustomStringConvertible {
        var component: String
        var objectID: String
        var diagnostic: Bool
        var source: String
        var deviceClass: String
        var stateClass: String
        var unit: String
        var needs: String
        var description: String {
            "\(component) \(objectID)\(diagnostic ? " (diagnostic)" : "") reads \(source); device_class \(deviceClass), "
                + "state_class \(stateClass), unit \(unit), needs \(needs)"
        }
    }

    static let none = "—"

    static func row(_ entity: DiscoveryEntity) -> Row {
        let needs = switch entity.requirement {
        case .always: none
        case .gps: "GPS"
        case .bridge: "bridge"
        case .gpsOrBridge: "GPS or bridge"
        }
        return Row(
            component: entity.component.rawValue, objectID: entity.objectID, diagnostic: entity.entityCategory == "diagnostic",
            source: entity.topic ?? entity.source.rawValue, deviceClass: entity.deviceClass ?? none,
            stateClass: entity.stateClass ?? none, unit: entity.unit ?? none, needs: needs)
    }

    /// The catalogue's entities, and a pair of shoes' as the table writes it (`shoe_<gear id>`).
    static func catalogue() -> [Row] {
        let gear = StoredGear(id: "<gear id>", name: "", startKm: 0, limitKm: nil, createdMs: 0)
        return DiscoveryCatalog.entities.map(row) + [row(ShoeEntity.entity(for: gear))]
    }

    /// The table under "Home Assistant" in docs/contract.md, one row per entity.
    static func contractTable() throws -> [Row] {
        let contract = try String(contentsOfFile: "\(Tools.packageRoot)/docs/contract.md", encoding: .utf8)
        let header = "| component | object_id | reads | device_class | state_class | unit | needs |"
        let table = try #require(contract.components(separatedBy: header + "\n").dropFirst().first, "no entity table in docs/contract.md")
        let firstBackticked = /`([^`]*)`/
        return try table.split(separator: "\n").dropFirst().prefix { $0.hasPrefix("|") }.map { line in
            let cells = line.dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            try #require(cells.count == 7, "not a row of seven cells: \(line)")
            let objectID = try #require(cells[1].firstMatch(of: firstBackticked)?.output.1, "no object id in \(line)")
            let reads = try #require(cells[2].firstMatch(of: firstBackticked)?.output.1, "no topic read in \(line)")
            // "— (source `gps`)": what the column says is its first word.
            let deviceClass = cells[3].split(separator: " ").first.map(String.init) ?? ""
            return Row(
                component: cells[0], objectID: String(objectID), diagnostic: cells[1].contains("(diagnostic)"), source: String(reads),
                deviceClass: deviceClass, stateClass: cells[4], unit: cells[5], needs: cells[6])
        }
    }

    /// expectations.py's ENTITIES, the same columns (it keeps no diagnostic flag: taken from the catalogue).
    static func expectations() async throws -> [Row] {
        let script = """
            import json, sys
            sys.path.insert(0, sys.argv[1])
            import expectations as e
            needs = {None: "—", "gps": "GPS", "bridge": "bridge", "gps_or_bridge": "GPS or bridge"}
            print(json.dumps([[i, s[0], s[4], s[1] or "—", s[2] or "—", s[3] or "—", needs[s[6]]] for i, s in e.ENTITIES.items()]))
            """
        let python = try ManagedProcess(
            name: "expectations.py", executable: Tools.find("python3"), arguments: ["-c", script, "\(Tools.packageRoot)/scripts/homeassistant"])
        try #require(await python.waitForExit(timeout: 30) == 0, "python3 failed:\n\(python.text)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(python.text.utf8)) as? [[String]], "not a list: \(python.text)")
        let diagnostic = Set(DiscoveryCatalog.entities.filter { $0.entityCategory == "diagnostic" }.map(\.objectID))
        return try rows.map { columns in
            try #require(columns.count == 7, "\(columns)")
            return Row(
                component: columns[1], objectID: columns[0], diagnostic: diagnostic.contains(columns[0]), source: columns[2],
                deviceClass: columns[3], stateClass: columns[4], unit: columns[5], needs: columns[6])
        }
    }

    /// What one list has that the other lacks, row by row, then any difference of order.
    static func differences(_ list: [Row], from catalogue: [Row], named name: String) -> [String] {
        var lines = catalogue.filter { !list.contains($0) }.map { "the catalogue has, \(name) lacks: \($0)" }
        lines += list.filter { !catalogue.contains($0) }.map { "\(name) has, the catalogue lacks: \($0)" }
        if lines.isEmpty, list != catalogue {
            lines.append("\(name) lists them in another order: \(list.map(\.objectID)) instead of \(catalogue.map(\.objectID))")
        }
        return lines
    }

    @Test("docs/contract.md's entity table is the catalogue's entities, in its order")
    func contractTableIsCatalogue() throws {
        let table = try Self.contractTable()
        #expect(table.count > 20, "read only \(table) from docs/contract.md")
        let differences = Self.differences(table, from: Self.catalogue(), named: "docs/contract.md")
        #expect(differences.isEmpty, "fix docs/contract.md's table (or the catalogue):\n\(differences.joined(separator: "\n"))")
    }

    @Test("scripts/homeassistant/expectations.py expects the catalogue's entities (shoes are checked on their own there)")
    func expectationsAreCatalogue() async throws {
        let expected = try await Self.expectations()
        let catalogue = Self.catalogue().filter { !$0.objectID.hasPrefix(ShoeEntity.objectPrefix) }
        let differences = Self.differences(expected, from: catalogue, named: "expectations.py")
        #expect(differences.isEmpty, "fix scripts/homeassistant/expectations.py (or the catalogue):\n\(differences.joined(separator: "\n"))")
    }

    @Test("a difference is named row by row: what one list lacks, what it adds, or the order")
    func differencesNamed() {
        let a = Row(component: "sensor", objectID: "a", diagnostic: false, source: "status", deviceClass: "—", stateClass: "—", unit: "—", needs: "—")
        var b = a
        b.objectID = "b"
        var changed = b
        changed.unit = "s"
        #expect(Self.differences([a, changed], from: [a, b], named: "doc") == [
            "the catalogue has, doc lacks: \(b)", "doc has, the catalogue lacks: \(changed)",
        ])
        #expect(Self.differences([b, a], from: [a, b], named: "doc") == ["doc lists them in another order: [\"b\", \"a\"] instead of [\"a\", \"b\"]"])
        #expect(Self.differences([a, b], from: [a, b], named: "doc").isEmpty)
    }
}
