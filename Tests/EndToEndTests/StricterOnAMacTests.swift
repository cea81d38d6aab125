import LabCatalogue
import LabVocabulary
import Testing

/// The checker's notes on calls whose Apple declaration is stricter than Linux's: each use named
/// with its line, in either spelling; none for a plain cancel, a comment, or lesson 09, whose
/// tasks are the lab's and strict on every system.
struct StricterOnAMacTests {
    @Test func eachUseIsNamedWithItsLine() {
        let code = """
            task?.cancel(byProducingResumeData: { data in kept = data })
            task.cancel()
            // task.cancel(byProducingResumeData: { _ in })
            task.cancel { data in kept = data }
            """
        let notes = StricterOnAMac.notes(in: code, path: "A.swift", lesson: .downloadTaskResume)
        #expect(notes.map { $0.prefix(while: { $0 != " " }) } == ["A.swift:1:", "A.swift:4:"], "\(notes)")
        #expect(notes.first?.hasPrefix("A.swift:1: on a Mac, cancel(byProducingResumeData:): its handler is @Sendable in Apple's NSURLSession.h") == true)
        #expect(StricterOnAMac.notes(in: code, path: "A.swift", lesson: .backgroundSession).isEmpty)
    }
}
