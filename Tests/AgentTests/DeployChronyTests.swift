import Foundation
import Testing
import TestKit

/// deploy/chrony: the GPS as chrony's reference clock, read by Debian's own chronyd.
@Suite("Deploy: chrony")
struct DeployChronyTests {
    static let conf = "\(Tools.packageRoot)/deploy/chrony/keepalive-gps.conf"

    /// chronyd from the machine, or as scripts/setup.sh unpacked it from Debian's package
    /// (installing chrony would replace the machine's own time service).
    static var chronyd: String? {
        ["/usr/sbin/chronyd", "\(Tools.packageRoot)/.build/tools/chrony/usr/sbin/chronyd"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Debian's chrony.conf as shipped, reading our file from its conf.d.
    static func mainConfig(in directory: TemporaryDirectory) throws -> String {
        try FileManager.default.createDirectory(atPath: directory.file("conf.d"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: conf, toPath: directory.file("conf.d/keepalive-gps.conf"))
        return try directory.write("chrony.conf", "confdir \(directory.path)/conf.d\nmakestep 1 3\ndriftfile \(directory.path)/drift\n")
    }

    @Test("chronyd -p reads the configuration: the GPS sentences on SHM 0 and the pulse on SHM 1")
    func parses() async throws {
        let chronyd = try #require(Self.chronyd, "no chronyd: scripts/setup.sh unpacks Debian's chrony into .build/tools")
        let directory = try TemporaryDirectory("chrony")
        let main = try Self.mainConfig(in: directory)
        let run = try ManagedProcess(name: "chronyd -p", executable: chronyd, arguments: ["-p", "-f", main])
        #expect(await run.waitForExit(timeout: 20) == 0, "\(run.text)")
        #expect(run.text.contains("refclock SHM 0 refid GPS"), "\(run.text)")
        #expect(run.text.contains("refclock SHM 1 refid PPS"), "\(run.text)")
    }

    @Test("chronyd -Q starts with the configuration and polls its reference clocks (in a private IPC namespace, without touching the clock)")
    func runs() async throws {
        let chronyd = try #require(Self.chronyd, "no chronyd: scripts/setup.sh unpacks Debian's chrony into .build/tools")
        let directory = try TemporaryDirectory("chrony")
        let main = try Self.mainConfig(in: directory)
        // -Q: measure, never set the clock; -u root: no _chrony user is needed here; a private
        // IPC namespace: the NTP shared-memory segments of gpsds other tests run are not read.
        let run = try ManagedProcess(
            name: "chronyd -Q", executable: "/usr/bin/unshare",
            arguments: ["--ipc", chronyd, "-Q", "-u", "root", "-t", "3", "-f", main])
        _ = await run.waitForExit(timeout: 30)
        #expect(!run.text.contains("Fatal error"), "\(run.text)")
        #expect(run.text.contains("Disabled control of system clock"), "\(run.text)")
        #expect(run.text.contains("Timeout reached") || run.text.contains("No suitable source"), "no GPS writes time here: \(run.text)")
    }
}

