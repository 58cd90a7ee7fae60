import Foundation
import Testing
import TestKit

/// The built binary, as a Pi owner runs it.
@Suite("Command line")
struct CommandLineTests {
    func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let process = try ManagedProcess(name: "keepalive", executable: Tools.agent, arguments: arguments)
        let status = await process.waitForExit(timeout: 30)
        return (status ?? -1, process.text)
    }

    @Test("--version prints the version")
    func version() async throws {
        let result = try await run(["--version"])
        #expect(result.status == 0)
        #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
    }

    @Test("check-config accepts the documented config.toml")
    func checkConfigAcceptsDefault() async throws {
        let result = try await run(["check-config", "\(Tools.packageRoot)/config.toml"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains(": ok"))
    }

    static let badConfigs = [
        ("[mqtt]\nflavour = 1\n", "mqtt.flavour"),
        ("[mqtt]\nport = 99999\n", "mqtt.port"),
        ("[device]\ntimezone = \"Mars/Olympus\"\n", "device.timezone"),
        ("[bike]\nwheel_circumference_mm = 10\n", "bike.wheel_circumference_mm"),
    ]

    /// Runs `arguments(path)` on a file holding `text`: it must exit 78 naming `key`.
    func expectExit78(_ text: String, naming key: String, _ arguments: (String) -> [String]) async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("bad.toml", text)
        let result = try await run(arguments(path))
        #expect(result.status == 78, "\(arguments(path)): \(result.output)")
        #expect(result.output.contains(key), "\(arguments(path)): \(result.output)")
    }

    @Test("check-config exits 78 naming the key", arguments: badConfigs)
    func badConfigExits78(text: String, key: String) async throws {
        try await expectExit78(text, naming: key) { ["check-config", $0] }
    }

    @Test("run exits 78 naming the key", arguments: badConfigs)
    func badConfigRunExits78(text: String, key: String) async throws {
        try await expectExit78(text, naming: key) { ["run", "--config", $0] }
    }

    @Test("a missing file exits non-zero with a clear message")
    func missingFile() async throws {
        let result = try await run(["check-config", "/nonexistent/keepalive.toml"])
        #expect(result.status == 78)
        #expect(result.output.contains("no such file"))
    }

    @Test("check-config never prints the MQTT password")
    func passwordNotPrinted() async throws {
        let directory = try TemporaryDirectory()
        let passwordFile = try directory.write("pw", "s3cret-Passw0rd\n")
        let path = try directory.write("c.toml", "[mqtt]\nusername = \"pi\"\npassword_file = \"\(passwordFile)\"\n")
        let result = try await run(["check-config", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.output.contains("s3cret"))
    }

    @Test("an unknown subcommand or flag is a usage error", arguments: [["fly"], ["run", "--colour"]])
    func usageError(arguments: [String]) async throws {
        let result = try await run(arguments)
        #expect(result.status == 64, "\(result.output)")
    }

    @Test("--help works on every subcommand", arguments: ["run", "query", "export", "check-config"])
    func help(subcommand: String) async throws {
        let result = try await run([subcommand, "--help"])
        #expect(result.status == 0)
        #expect(result.output.contains("USAGE"))
    }
}
