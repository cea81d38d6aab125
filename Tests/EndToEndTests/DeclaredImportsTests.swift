import Foundation
import TestFolders
import Testing

/// Every module of the package that a target's source imports is one its manifest entry names:
/// nothing comes in only because another dependency happens to bring it. Read from SwiftPM's own
/// account of the manifest (`swift package dump-package`), not from the manifest's text.
struct DeclaredImportsTests {
    struct Target {
        let name: String
        let folder: URL
        let declared: Set<String>
    }

    static func targets() throws -> [Target] {
        let root = ExerciseTests.packageRoot
        let dumped = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"),
                                                 ["swift", "package", "--package-path", root.path, "dump-package"])
        #expect(dumped.status == 0, "\(dumped.stderr)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(dumped.stdout.utf8)) as? [String: Any])
        let entries = try #require(manifest["targets"] as? [[String: Any]])
        return entries.compactMap { entry in
            guard let name = entry["name"] as? String, entry["type"] as? String != "test" else { return nil }
            let path = entry["path"] as? String ?? "Sources/\(name)"
            let dependencies = entry["dependencies"] as? [[String: Any]] ?? []
            let declared = dependencies.compactMap { dependency in
                ((dependency["byName"] ?? dependency["target"]) as? [Any])?.first as? String
            }
            return Target(name: name, folder: root.appendingPathComponent(path), declared: Set(declared))
        }
    }

    @Test func everyImportOfTheLabsOwnModulesIsDeclared() throws {
        let targets = try Self.targets()
        let ownModules = Set(targets.map(\.name))
        #expect(ownModules.contains("LabKit") && ownModules.contains("EmbeddedServer"), "\(ownModules.sorted())")
        for target in targets {
            let files = FileManager.default.enumerator(at: target.folder, includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: /(?m)^(?:@testable )?import ([A-Za-z_]+)/) {
                    let module = String(match.output.1)
                    guard ownModules.contains(module), module != target.name else { continue }
                    #expect(target.declared.contains(module),
                            "\(file.path.replacingOccurrences(of: ExerciseTests.packageRoot.path + "/", with: "")) imports \(module), which \(target.name) does not declare")
                }
            }
        }
    }

    /// The table of modules in docs/architecture.md names, for each module, the lab's own
    /// modules its manifest entry names (what a row says it does not use comes after a ";").
    @Test func theArchitecturePageListsWhatTheManifestDeclares() throws {
        let targets = try Self.targets()
        // The lesson executables `lab` runs are "the lesson executables" there, not each one.
        let ownModules = Set(targets.map(\.name).filter { !$0.hasPrefix("lesson-") })
        let page = try String(contentsOf: ExerciseTests.packageRoot.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        var rows = 0
        for match in page.matches(of: /(?m)^\| `([A-Za-z0-9-]+)` \| ([^|]*) \|/) {
            guard let target = targets.first(where: { $0.name == String(match.output.1) }) else { continue }
            rows += 1
            let said = String(match.output.2.prefix { $0 != ";" }).matches(of: /`([A-Za-z0-9-]+)`/).map { String($0.output.1) }
            #expect(Set(said).intersection(ownModules) == target.declared.intersection(ownModules),
                    "\(target.name): the page says \(said.sorted()), the manifest \(target.declared.intersection(ownModules).sorted())")
        }
        #expect(rows >= 13, "the module table has \(rows) rows")
    }
}
