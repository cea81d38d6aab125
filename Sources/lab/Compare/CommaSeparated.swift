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

    static func all<Name: LabName & CaseIterable>(_ names: Name.Type) -> String {
        Name.allCases.map(\.rawValue).joined(separator: ", ")
    }
}

/// A size `lab compare` can run: 64 KiB to 8 GiB, written as `ByteSize` reads it (32MiB).
enum ComparedSize {
    static func parse(_ text: String) throws -> Int64 {
        let size: Int64
        do { size = try ByteSize.parse(text) } catch { throw ValidationError("\(error)") }
        guard size >= 64 << 10, size <= 8 << 30 else { throw ValidationError("\(text) is outside 64KiB…8GiB") }
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
