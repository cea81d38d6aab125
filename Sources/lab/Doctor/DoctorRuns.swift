import Foundation
import LabFixtures
import LabHarness
import LabKit
import LabPlatform
import LabServer
import LabVocabulary

/// `lab doctor`'s two runs: a lesson downloading from the server the port check started, and an
/// exercise check as a student starts one.
extension DoctorProbes {
    func lessonRun() -> (DoctorFinding.Verdict, String) {
        guard let server = serverForRuns, let folder = workFolderForRuns else { return (.notRun, "needs the server and the output folder") }
        let lesson = LessonID.outputStream.executable
        let fixture = Fixture(name: "doctor-\(Self.lessonRunSize).bin", size: Self.lessonRunSize)
        let expected = fixture.sha256Hex()
        let file = folder.appendingPathComponent(fixture.name)
        let url = server.url(for: fixture, faults: "drop:40pct,ok", run: "doctor")
        let arguments = ["--url", url.absoluteString, "--sha256", expected, "--output", file.path, "--json", "--quiet"]
        let started = ContinuousClock.now
        let finished: ChildCommand.Finished
        do {
            finished = try ChildCommand.run(Platform.productsFolder.appendingPathComponent(lesson), arguments, timeout: .seconds(60))
        } catch {
            return (.problem, "cannot start \(lesson): \(describe(error))")
        }
        let seconds = (ContinuousClock.now - started).seconds
        guard !finished.timedOut else { return (.problem, "\(lesson) was still running after 60 s: stopped") }
        guard finished.status == 0 else {
            return (.problem, "\(lesson) exited \(finished.status): \(finished.lastLine)")
        }
        guard let digest = try? FileDigest.sha256Hex(of: file), digest == expected else {
            return (.problem, "\(lesson) said it finished, and its file is not the server's (SHA-256 checked from outside)")
        }
        let gets = server.requests(run: "doctor", method: .get)
        let resumed = gets.count == 2 && gets[1].status == 206
        guard resumed else {
            return (.problem, "\(lesson) brought the file in \(gets.count) requests, not cut at 40% and resumed with Range")
        }
        return (.ok, "\(lesson): \(ByteFormat.iec(Self.lessonRunSize)) cut at 40% and resumed with Range, "
                + "SHA-256 checked from outside, in \(String(format: "%.1f", seconds)) s")
    }

    /// Exercise 00's checks on the lesson's corrected code, whose every check holds: the build,
    /// the lab server's faults and the verdicts, as `lab exercise check` gives them a student.
    func exerciseCheck() -> (DoctorFinding.Verdict, String) {
        let root: URL
        do {
            root = try ExerciseWorkspace.find().root
        } catch {
            return (.problem, "no Sources/Exercises here or above: run `lab doctor` in the Download Lab folder")
        }
        guard let lab = Bundle.main.executableURL else { return (.problem, "cannot tell where lab itself is") }
        let exercise = LessonID.smallFile.rawValue.prefix(2)
        let arguments = ["exercise", "check", String(exercise), "--variant", "corrected", "--json"] + (ignoringLock ? ["--ignore-lock"] : [])
        let started = ContinuousClock.now
        let finished: ChildCommand.Finished
        do {
            finished = try ChildCommand.run(lab, arguments, in: root, timeout: .seconds(300))
        } catch {
            return (.problem, "cannot start lab exercise check: \(describe(error))")
        }
        let seconds = (ContinuousClock.now - started).seconds
        guard !finished.timedOut else { return (.problem, "`lab \(arguments.joined(separator: " "))` was still running after 300 s: stopped") }
        let records = finished.stdout.split(separator: "\n").compactMap { try? JSONDecoder().decode(CheckLine.self, from: Data($0.utf8)) }
        let holding = records.filter(\.passed).count
        guard finished.status == 0, !records.isEmpty, holding == records.count else {
            let failing = records.first { !$0.passed }.map { "\($0.check): \($0.detail)" } ?? finished.lastLine
            return (.problem, "exercise \(exercise)'s checks on the lesson's corrected code: \(holding) of \(records.count) hold; \(failing)")
        }
        return (.ok, "exercise \(exercise) built and checked: \(holding) of \(records.count) checks hold on the lesson's corrected code, "
                + "in \(String(format: "%.1f", seconds)) s")
    }

    /// What the doctor reads of `lab exercise check --json`'s lines.
    private struct CheckLine: Decodable {
        let check: String
        let passed: Bool
        let detail: String
    }
}
