import Foundation

/// The agent on one core at a 25 % CPU quota: a stand-in for a Pi 3 (`KEEPALIVE_BENCH_SLOW_CORE=1`).
/// With systemd as PID 1, `systemd-run --scope -p CPUQuota=25% -p AllowedCPUs=0`; otherwise a
/// cgroup made here: v2 (`cpu.max` "25000 100000", `cpuset.cpus` 0) where the unified hierarchy has
/// the cpu controller, else v1 (`cpu.cfs_quota_us` 25000 of 100000, `cpuset.cpus` 0), which is
/// what these machines have (no systemd; v1 hierarchies under /sys/fs/cgroup).
enum SlowCore {
    static let name = "keepalive-bench-slow-core"

    static var requested: Bool { ProcessInfo.processInfo.environment["KEEPALIVE_BENCH_SLOW_CORE"] == "1" }

    /// What the figures' names say about the limit.
    static var label: String { "one core at a 25 % quota (\(method))" }

    static var method: String {
        if isSystemd { return "systemd-run scope" }
        return FileManager.default.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers") ? "cgroup v2" : "cgroup v1 cpu + cpuset"
    }

    private static var isSystemd: Bool {
        ((try? String(contentsOfFile: "/proc/1/comm", encoding: .utf8)) ?? "").hasPrefix("systemd")
    }

    /// The cgroup directories a process is moved into (empty with systemd-run).
    private static var directories: [String] {
        if isSystemd { return [] }
        if FileManager.default.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers") { return ["/sys/fs/cgroup/\(name)"] }
        return ["/sys/fs/cgroup/cpu/\(name)", "/sys/fs/cgroup/cpuset/\(name)"]
    }

    /// `executable arguments` run under the limit: the same pid (the wrapper execs it).
    static func wrap(_ executable: String, _ arguments: [String]) throws -> (executable: String, arguments: [String]) {
        if isSystemd {
            return ("/usr/bin/systemd-run", ["--scope", "--quiet", "-p", "CPUQuota=25%", "-p", "AllowedCPUs=0", executable] + arguments)
        }
        try prepare()
        let moves = directories.map { "echo $$ > \($0)/cgroup.procs" }.joined(separator: " && ")
        return ("/bin/sh", ["-c", "\(moves) && exec \"$0\" \"$@\"", executable] + arguments)
    }

    private static func prepare() throws {
        func write(_ value: String, _ file: String) throws { try value.write(toFile: file, atomically: false, encoding: .utf8) }
        for directory in directories where !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        }
        if method == "cgroup v2" {
            try write("+cpu +cpuset", "/sys/fs/cgroup/cgroup.subtree_control")
            try write("25000 100000", "\(directories[0])/cpu.max")
            try write("0", "\(directories[0])/cpuset.cpus")
        } else {
            try write("100000", "\(directories[0])/cpu.cfs_period_us")
            try write("25000", "\(directories[0])/cpu.cfs_quota_us")
            try write("0", "\(directories[1])/cpuset.cpus")
            try write("0", "\(directories[1])/cpuset.mems")
        }
    }

    /// Removes the cgroups once nothing runs in them.
    static func remove() {
        for directory in directories { rmdir(directory) }
    }
}
