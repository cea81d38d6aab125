import ArgumentParser
import LabCatalogue
import LabVocabulary

/// The values of `lab compare`'s list options, read once when ArgumentParser parses the command
/// line: a name outside its closed set fails there, with the names there are.
enum CommaSeparated {
    static func list<Element>(_ text: String, _ element: (String) throws -> Element) throws -> [Element] {
        let items = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !items.isEmpty else { throw ValidationError("give at least one") }
        return try items.map(element)
    }

    /// Names of a closed set, such as variants or scenarios.
    static func names<Name: LabName & CaseIterable>(_ text: String, _ noun: String) throws -> [Name] {
        try list(text) { name in
            guard let value = Name(rawValue: name) else { throw ValidationError("no \(noun) \"\(name)\"; there are \(all(Name.self))") }
            return value
        }
    }

    /// Refuses a list that names one thing twice (`--lessons 3,03`), which would run it twice.
    static func noneTwice<Item: Hashable>(_ items: [Item], option: String, name: (Item) -> String) throws {
        var seen = Set<Item>()
        for item in items where !seen.insert(item).inserted {
            throw ValidationError("\(option) names \(name(item)) more than once")
        }
    }

    static func all<Name: LabName & CaseIterable>(_ names: Name.Type) -> String {
        Name.allCases.map(\.rawValue).joined(separator: ", ")
    }
}

/// A size `lab compare` can run: 64 KiB to 8 GiB, written as `ByteSize` reads it (32MiB).
enum ComparedSize {
    static func parse(_ text: String) throws -> Int64 { try parse(text, within: (64 << 10)...(8 << 30), reason: "") }

    /// The connections comparison's file: at least 8 MiB, so that 8 connections each get a range.
    static func parseConnections(_ text: String) throws -> Int64 {
        try parse(text, within: (8 << 20)...(8 << 30), reason: ": 8 connections each need a range")
    }

    private static func parse(_ text: String, within sizes: ClosedRange<Int64>, reason: String) throws -> Int64 {
        let size: Int64
        do { size = try ByteSize.parse(text) } catch { throw ValidationError("\(error)") }
        guard sizes.contains(size) else {
            throw ValidationError("\(text) is outside \(ByteSize.format(sizes.lowerBound))…\(ByteSize.format(sizes.upperBound))\(reason)")
        }
        return size
    }
}

extension LessonDefects {
    /// A lesson by any of the names `LessonID(named:)` reads, but not an exercise's: `lab compare`
    /// runs the lessons.
    static func parse(_ name: String) throws -> LessonDefects {
        guard !name.hasPrefix(LessonID.exercisePrefix), let lesson = Catalogue.lesson(named: name) else {
            throw ValidationError("no lesson \"\(name)\"; there are \(Catalogue.lessons.map(\.id.rawValue).joined(separator: ", "))")
        }
        return lesson
    }
}
