// The memory floor the agent is measured against: a program built like the packaged agent
// (Swift runtime and Foundation linked in statically) that does only what every run of the
// agent must — resolve an IANA time zone and find the start of a local day — then reports its
// peak RSS. Anything the agent uses above this is its own.
import Foundation

let zone = CommandLine.arguments.dropFirst().first ?? "Europe/Berlin"
var calendar = Calendar(identifier: .gregorian)
calendar.timeZone = TimeZone(identifier: zone) ?? .gmt
let start = calendar.startOfDay(for: Date())
let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }?.split(separator: " ").dropFirst().first ?? "0"
print("\(peak) \(Int(start.timeIntervalSince1970))")
