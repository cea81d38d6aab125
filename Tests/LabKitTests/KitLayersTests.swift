import Foundation
import Testing

/// LabKit's folders are layers: each file uses only what its own folder and the folders before it
/// declare (docs/architecture.md). Read from the source, so a new dependency the wrong way fails
/// here, with the file and the name.
@Suite("LabKit's folders are layers")
struct KitLayersTests {
    static let layers = ["Support", "Inspector", "Downloading", "Run"]
    static let kit = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/LabKit")

    @Test func noFolderNamesATypeOfALaterOne() throws {
        let sources = try Self.layers.map { try Self.swiftFiles(in: $0) }
        #expect(sources.allSatisfy { !$0.isEmpty }, "every layer has files")
        for (layer, files) in sources.enumerated() {
            let later = Set(sources[(layer + 1)...].joined().flatMap { Self.declaredTypes(in: $0.text) })
            for file in files {
                let named = Self.identifiers(in: file.text).intersection(later)
                #expect(named.isEmpty, "\(Self.layers[layer])/\(file.name) names \(named.sorted()), declared in a later folder")
            }
        }
    }

    /// The check sees what it looks for: `Downloading/` declares `PartialFile`, and `Run/` names it.
    @Test func theCheckFindsTypesAndTheirUses() throws {
        let downloading = try Self.swiftFiles(in: "Downloading").flatMap { Self.declaredTypes(in: $0.text) }
        #expect(downloading.contains("PartialFile"))
        let run = try Self.swiftFiles(in: "Run").map { Self.identifiers(in: $0.text) }
        #expect(run.contains { $0.contains("PartialFile") })
    }

    struct SourceFile {
        let name: String
        let text: String
    }

    static func swiftFiles(in layer: String) throws -> [SourceFile] {
        let folder = kit.appendingPathComponent(layer)
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return [] }
        return try walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.map { url in
            SourceFile(name: String(url.path.dropFirst(folder.path.count + 1)), text: try String(contentsOf: url, encoding: .utf8))
        }
    }

    /// The types a file declares at its top level for other files to use (nested and file-private
    /// ones are reached only through their file or their outer type).
    static func declaredTypes(in text: String) -> [String] {
        let declaration = /^(?:@\w+\s+)*(?:(?:public|package|internal|final|open)\s+)*(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)/
        return text.split(separator: "\n").compactMap { line in line.firstMatch(of: declaration).map { String($0.1) } }
    }

    /// Every identifier that begins with a capital, outside comments and string literals.
    static func identifiers(in text: String) -> Set<String> {
        let code = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let withoutComment = line.firstRange(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
            return withoutComment.replacing(/"(?:[^"\\]|\\.)*"/, with: "\"\"")
        }.joined(separator: "\n")
        // Whole identifiers, left to right (Unicode word boundaries would join `Type.member`).
        return Set(code.matches(of: /[A-Za-z_][A-Za-z0-9_]*/).map { String($0.0) }.filter { $0.first!.isUppercase })
    }
}
