import LabServer
import LabVocabulary
import Testing

/// The fault list `lab serve --help` and the index page print is made from the vocabulary: every
/// fault is in it, spelled as the parser reads it, and a bare fault parses to what it names.
struct FaultReferenceTests {
    @Test(arguments: FaultScript.Name.allCases)
    func everyFaultIsListedAsItIsWritten(name: FaultScript.Name) throws {
        let reference = FaultScript.reference()
        for (written, _) in name.reference where !written.isEmpty {
            #expect(written == name.rawValue || written.hasPrefix(name.rawValue + ":"), "\(written)")
            #expect(reference.contains("\n  " + written + " ") || reference.hasPrefix("  " + written + " "), "\(written) is not listed")
        }
        #expect(HelpText.faultSyntax.contains(reference))
        switch name.form {
        case .bare(let fault):
            #expect(try FaultScript(parsing: name.rawValue).attempts == [fault.map { [$0] } ?? []])
        case .oneValue(let shape):
            // Without its value, the error shows how the value is written.
            #expect(throws: LabError.self) { try FaultScript(parsing: name.rawValue) }
            #expect(shape.hasPrefix(name.rawValue + ":"))
        case .offsetAndDuration:
            #expect(try FaultScript(parsing: name.rawValue + ":1KiB").attempts == [[.stall(after: .bytes(1024), duration: nil)]])
        }
    }

    /// No line is wider than a terminal's 80 columns.
    @Test func theListFitsATerminal() {
        let lines = FaultScript.reference().split(separator: "\n")
        #expect(lines.count >= FaultScript.Name.allCases.count)
        #expect(lines.allSatisfy { $0.count <= 78 }, "\(lines.filter { $0.count > 78 })")
    }
}
