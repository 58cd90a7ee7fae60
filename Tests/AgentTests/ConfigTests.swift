import Foundation
import Store
import Testing
import TestKit

@testable import Agent

@Suite("Configuration")
struct ConfigTests {
    let system = SystemDefaults(deviceID: "pi-zero", timezone: "Europe/Berlin")

    func parse(_ text: String) throws -> AgentConfig {
        try ConfigLoader.parse(text: text, file: "test.toml", system: system)
    }

    /// The error `text` gives, which must exist.
    func error(_ text: String) throws -> ConfigError {
        do {
            _ = try parse(text)
        } catch let error as ConfigError {
            return error
        }
        Issue.record("expected a ConfigError for:\n\(text)")
        throw WaitTimeout(description: "no error")
    }

    @Test("the documented config.toml at the root is valid and equals the built-in defaults")
    func rootConfigIsTheDefaults() throws {
        let text = try String(contentsOfFile: "\(Tools.packageRoot)/config.toml", encoding: .utf8)
        let documented = try parse(text)
        let empty = try parse("")
        #expect(documented == empty)
        #expect(documented.device.id == "pi-zero")
        #expect(documented.device.timezone == "Europe/Berlin")
        #expect(documented.mqtt.host == "127.0.0.1")
        #expect(documented.mqtt.port == 1883)
        #expect(documented.mqtt.protocolVersion == .v5)
        #expect(documented.mqtt.clientID == "keepalive-pi-zero")
        #expect(documented.gps.host == "127.0.0.1")
        #expect(documented.gps.port == 2947)
        #expect(documented.gps.fixTimeoutS == 30)
        #expect(documented.hr.stallTimeoutS == 10)
        #expect(documented.store.path == "/var/lib/keepalive/keepalive.db")
        #expect(documented.store.synchronous == .full)
        #expect(documented.schedule.locationIntervalS == 300)
        #expect(documented.topicRoot == "keepalive/pi-zero")
    }

    @Test("every key of the root config.toml is one the loader reads")
    func rootConfigListsEveryKey() throws {
        let text = try String(contentsOfFile: "\(Tools.packageRoot)/config.toml", encoding: .utf8)
        // Dropping any one key must still parse (it falls back to the same default) ...
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var keyLines = 0
        for (index, line) in lines.enumerated() where line.contains(" = ") && !line.hasPrefix("#") {
            keyLines += 1
            var without = lines
            without.remove(at: index)
            #expect(try parse(without.joined(separator: "\n")) == parse(""))
        }
        // ... and the summary check-config prints names as many keys as the file documents.
        let summaryKeys = ConfigSummary(try parse("")).text.split(separator: "\n").filter { $0.contains(" = ") }.count
        #expect(keyLines == summaryKeys)
    }

    @Test("config.toml documents exactly the keys ConfigKeys declares, section by section")
    func rootConfigMatchesTheDeclarations() throws {
        let text = try String(contentsOfFile: "\(Tools.packageRoot)/config.toml", encoding: .utf8)
        var documented: [String] = []
        var section = ""
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            if line.hasPrefix("[") { section = String(line.dropFirst().prefix { $0 != "]" }) }
            if let equals = line.range(of: " = ") { documented.append("\(section).\(line[..<equals.lowerBound])") }
        }
        let declared = ConfigKeys.all.map { "\($0.section).\($0.name)" }
        #expect(documented == declared, "config.toml and ConfigKeys differ: \(Set(documented).symmetricDifference(declared).sorted())")
    }

    @Test("check-config prints each key ConfigKeys declares once")
    func summaryPrintsEveryDeclaredKey() throws {
        let printed = ConfigSummary(try parse("")).text.split(separator: "\n").filter { $0.contains(" = ") }
        #expect(printed.count == ConfigKeys.all.count)
    }

    @Test("values are read with their types")
    func readsValues() throws {
        let config = try parse("""
            [device]
            id = "bike"
            timezone = "America/New_York"
            [mqtt]
            host = "broker.lan"
            port = 8883
            protocol = 311
            prefix = "home/tracker"
            reconnect_max_s = 120
            [gps]
            max_rate_hz = 0.5
            [hr]
            transport = "command"
            command = ["/usr/bin/keepalive-hr-bridge", "--ndjson"]
            [store]
            synchronous = "normal"
            [query]
            extra_topics = ["fleet/selection/date"]
            [health]
            max_hr = 180
            resting_hr = 50
            """)
        #expect(config.device.id == "bike")
        #expect(config.mqtt.port == 8883)
        #expect(config.mqtt.protocolVersion == .v311)
        #expect(config.mqtt.reconnectMaxS == 120)
        #expect(config.gps.maxRateHz == 0.5)
        #expect(config.hr.transport == .command)
        #expect(config.hr.command == ["/usr/bin/keepalive-hr-bridge", "--ndjson"])
        #expect(config.store.synchronous == .normal)
        #expect(config.query.extraTopics == ["fleet/selection/date"])
        #expect(config.topicRoot == "home/tracker/bike")
        #expect(config.health.maxHR == 180)
    }

    @Test("an unknown key names the key and its line")
    func unknownKey() throws {
        let error = try error("[mqtt]\nhost = \"x\"\n\n# a comment\nhots = \"y\"\n")
        #expect(error.key == "mqtt.hots")
        #expect(error.line == 5)
        #expect(error.description.contains("unknown key"))
    }

    @Test("an unknown section is refused")
    func unknownSection() throws {
        let error = try error("[mqtt]\nport = 1883\n[gsp]\nport = 2947\n")
        #expect(error.key == "gsp")
        #expect(error.line == 3)
    }

    @Test("an out-of-range port names the key and line")
    func badPort() throws {
        let error = try error("[device]\nid = \"a\"\n[mqtt]\nport = 70000\n")
        #expect(error.key == "mqtt.port")
        #expect(error.line == 4)
        #expect(error.message.contains("70000"))
    }

    @Test("[bike] wheel_circumference_mm: 2105 by default, 500…4000 taken, outside it named with its line")
    func bikeWheel() throws {
        #expect(try parse("").sensors[CyclingKind.wheelCircumferenceMm] == 2105)
        #expect(try parse("[bike]\nwheel_circumference_mm = 500\n").sensors[CyclingKind.wheelCircumferenceMm] == 500)
        #expect(try parse("[bike]\nwheel_circumference_mm = 4000\n").sensors[CyclingKind.wheelCircumferenceMm] == 4000)
        for value in ["10", "499", "4001", "-2105"] {
            let error = try error("[device]\nid = \"a\"\n[bike]\nwheel_circumference_mm = \(value)\n")
            #expect(error.key == "bike.wheel_circumference_mm" && error.line == 4 && error.message.contains(value), "\(value): \(error)")
        }
        #expect(try error("[bike]\nwheel_circumference_mm = 2105.5\n").key == "bike.wheel_circumference_mm")
    }

    @Test("a wrong type names the key")
    func wrongType() throws {
        let error = try error("[mqtt]\nport = \"1883\"\n")
        #expect(error.key == "mqtt.port")
        #expect(error.message.contains("integer"))
        #expect(try self.error("[gps]\nenabled = 1\n").key == "gps.enabled")
        #expect(try self.error("[hr]\ncommand = [1, 2]\n").key == "hr.command")
        #expect(try self.error("mqtt = 3\n").key == "mqtt")
    }

    @Test("an unknown IANA time zone is refused")
    func badTimezone() throws {
        let error = try error("[device]\ntimezone = \"Mars/Olympus\"\n")
        #expect(error.key == "device.timezone")
        #expect(error.line == 2)
        #expect(error.message.contains("Mars/Olympus"))
    }

    @Test("invalid TOML reports the line TOMLKit gives")
    func invalidTOML() throws {
        let error = try error("[mqtt]\nport = 1883\nhost = \n")
        #expect(error.line == 3)
        #expect(error.message.contains("not valid TOML"))
    }

    @Test("rules across keys", arguments: [
        ("[mqtt]\ntls = true\n", "mqtt.cafile"),
        ("[mqtt]\ntls = true\ncafile = \"/nonexistent/ca.pem\"\n", "mqtt.cafile"),
        ("[mqtt]\nusername = \"u\"\npassword_file = \"/nonexistent/pw\"\n", "mqtt.password_file"),
        ("[mqtt]\npassword_file = \"/etc/hostname\"\n", "mqtt.password_file"),
        ("[mqtt]\nreconnect_min_s = 10\nreconnect_max_s = 5\n", "mqtt.reconnect_min_s"),
        ("[mqtt]\nprefix = \"a/+/b\"\n", "mqtt.prefix"),
        ("[mqtt]\nprefix = \"$SYS\"\n", "mqtt.prefix"),
        ("[mqtt]\nprotocol = 4\n", "mqtt.protocol"),
        ("[device]\nid = \"a/b\"\n", "device.id"),
        ("[hr]\ntransport = \"bluetooth\"\n", "hr.transport"),
        ("[hr]\ntransport = \"command\"\n", "hr.command"),
        ("[hr]\ntopic = \"hrbridge/#/x\"\n", "hr.topic"),
        ("[health]\nmax_hr = 150\nresting_hr = 150\n", "health.resting_hr"),
        ("[store]\nmax_bytes = 1000\n", "store.max_bytes"),
        ("[store]\nsynchronous = \"off\"\n", "store.synchronous"),
        ("[schedule]\nlocation_interval_s = 0\n", "schedule.location_interval_s"),
        ("[gps]\nfix_timeout_s = -1\n", "gps.fix_timeout_s"),
        ("[query]\nextra_topics = [\"a/#/b\"]\n", "query.extra_topics"),
        ("[person]\nbirth_year = 199\n", "person.birth_year"),
        ("[person]\nbirth_year = -1\n", "person.birth_year"),
        ("[person]\nsex = \"m\"\n", "person.sex"),
    ])
    func crossKeyRules(text: String, key: String) throws {
        #expect(try error(text).key == key)
    }

    @Test("[person]: unknown by default")
    func personUnknownByDefault() throws {
        let unset = try parse("").person.subject(inYear: 2026)
        #expect(unset.age == nil && unset.gender == nil)
    }

    @Test("[person]: a birth year and sex reach the sleep classifier as age (as of the night's year) and gender")
    func person() throws {
        let set = try parse("[person]\nbirth_year = 1980\nsex = \"female\"\n")
        let subject = set.person.subject(inYear: 2026)
        #expect(subject.age == 46 && subject.gender?.rawValue == 0, "sleepecg codes female as 0")
        #expect(AggregateSettings(config: set).person == set.person)
    }

    @Test("a missing file is a clear error")
    func missingFile() throws {
        #expect(throws: ConfigError.self) { try ConfigLoader.load(path: "/nonexistent/keepalive.toml") }
        do {
            _ = try ConfigLoader.load(path: "/nonexistent/keepalive.toml")
        } catch let error as ConfigError {
            #expect(error.description.contains("no such file"))
        }
    }

    @Test("a '#' inside a string is not a comment when finding lines")
    func locatorSkipsQuotedHash() throws {
        let error = try error("[mqtt]\nhost = \"a#b\"\nport = 0\n")
        #expect(error.key == "mqtt.port")
        #expect(error.line == 3)
    }
}
