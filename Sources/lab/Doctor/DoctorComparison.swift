import Foundation
import LabCatalogue
import LabFixtures
import LabKit
import LabServer
import LabPlatform
import LabVocabulary

/// `lab doctor`'s part of `lab compare`: its references and one lesson run, through the
/// comparison's own code (`References`, `LessonRunner`), so that the main job's first step
/// cannot fail where the doctor passed.
extension DoctorProbes {
    /// Small enough to take a moment; large enough to cross many of the lesson's writes.
    static let comparisonSize: Int64 = 4 << 20

    func comparison() -> (DoctorFinding.Verdict, String) {
        guard let server = serverForRuns, let folder = workFolderForRuns?.appendingPathComponent("compare", isDirectory: true)
        else { return (.notRun, "needs the server and the output folder") }
        let digests = DigestCache()
        let references = References(source: .embedded(server), workFolder: folder, digests: digests,
                                    foundationFloor: Platform.productsFolder.appendingPathComponent("foundation-floor"))
        let runner = LessonRunner(source: .embedded(server), executables: Platform.productsFolder, workFolder: folder, digests: digests)
        let lesson = Catalogue.lesson(.outputStream)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var measured = try references.clients(size: Self.comparisonSize, repetitions: 1)
            if let loopback = try references.loopbackLimit(size: Self.comparisonSize, repetitions: 1) { measured.append(loopback) }
            measured.append(try references.diskLimit(size: Self.comparisonSize, repetitions: 1))
            let run = try runner.run(RunCase(lesson: lesson, variant: .corrected, scenario: .clean, size: Self.comparisonSize), repetition: 1)
            guard run.repetition.verified, run.repetition.exitCode == 0 else {
                return (.problem, "\(lesson.id.executable), run as lab compare runs it, exited \(run.repetition.exitCode) "
                        + (run.repetition.verified ? "with the right file" : "and its file is not the server's"))
            }
            return (.ok, "the references (" + measured.map(\.kind.rawValue).joined(separator: ", ") + ") and "
                    + "\(lesson.id.executable), as lab compare runs them, at \(ByteFormat.iec(Self.comparisonSize))")
        } catch {
            return (.problem, "lab compare would stop here: " + ((error as? CompareError)?.description ?? describe(error)))
        }
    }
}
