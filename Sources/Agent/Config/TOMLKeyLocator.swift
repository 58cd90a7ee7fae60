import Foundation

/// Finds the line on which a `[section]` or a `key = …` stands in a TOML text.
///
/// TOMLKit reports positions only for syntax errors, so validation errors (a bad port, an
/// unknown key) get their line from this plain scan of the same text.
struct TOMLKeyLocator {
    private var lines: [String: Int] = [:]

    init(text: String) {
        var section = ""
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = Self.stripComment(rawLine).trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                let name = line.trimmingCharacters(in: CharacterSet(charactersIn: "[] "))
                section = name
                if lines[name] == nil { lines[name] = index + 1 }
            } else if let equals = line.firstIndex(of: "=") {
                let key = line[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: " \t\"'"))
                let path = section.isEmpty ? key : "\(section).\(key)"
                if lines[path] == nil { lines[path] = index + 1 }
            }
        }
    }

    func line(of path: String) -> Int? { lines[path] }

    private static func stripComment(_ line: Substring) -> String {
        // A '#' inside a quoted string is not a comment.
        var quote: Character?
        var result = ""
        for character in line {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#" {
                break
            }
            result.append(character)
        }
        return result
    }
}
