import Foundation
import LabCatalogue
import TestFolders
import Testing

/// The teacher's page on a projector, 1280×720 in headless Chromium: the exercise the class is
/// on fits across without scrolling sideways, its text is 14 px or more, and each pass rate is a
/// number in a cell of its own.
struct ClassPageProjectorTests {
    @Test(.enabled(if: runningInCI || executable(named: "chromium-headless-shell") != nil,
                   "chromium-headless-shell is not installed; the browser test is skipped (apt-get install chromium-headless-shell)"))
    func theClassesCurrentExerciseFitsA1280By720Projector() throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        // 30 students: most on exercise 03, the one with the most checks, a few on 02.
        for index in 0..<30 {
            let exercise = index < 26 ? "03-outputstream" : "02-filehandle"
            let submission = ClassFixtures.submission(name: "Student with a long name \(index)", key: ClassFixtures.key(), exercise: exercise,
                                                      fixed: { $0.count % 3 != index % 3 })
            #expect(try ClassHTTP.post(server.submissions, ClassFixtures.json(submission)).status == 200)
        }
        let screenshot = folder.appendingPathComponent("projector.png")
        let results = try Browser.run(server.teacherURL, steps: [
            ["screenshot": screenshot.path],
            ["eval": "[...document.querySelectorAll('details.exercise[open]')].map(e => e.id)"],
            ["eval": "document.documentElement.scrollWidth <= innerWidth"],
            ["eval": """
                [...document.querySelectorAll('#exercise-03-outputstream th.check, #exercise-03-outputstream tfoot td')]
                  .filter(e => { const box = e.getBoundingClientRect(); return box.left < 0 || box.right > innerWidth; }).length
                """],
            ["eval": """
                Math.min(...[...document.querySelectorAll('main th, main td, main summary, main li, main p')]
                  .filter(e => e.getClientRects().length > 0).map(e => parseFloat(getComputedStyle(e).fontSize)))
                """],
            ["eval": "[...document.querySelectorAll('#exercise-03-outputstream tfoot td')].map(e => e.textContent)"],
        ])
        #expect(FileManager.default.fileExists(atPath: screenshot.path))
        #expect(results[1] as? [String] == ["exercise-02-filehandle", "exercise-03-outputstream"], "\(results[1])")
        #expect(results[2] as? Bool == true, "the page scrolls sideways at 1280 px")
        #expect(results[3] as? Int == 0, "columns of exercise 03 lie outside the 1280 px viewport")
        #expect((results[4] as? Double ?? 0) >= 14, "text smaller than 14 px: \(results[4])")
        let rates = results[5] as? [String] ?? []
        #expect(rates.count == Catalogue.lesson(named: "03")!.everyCheck.count)
        // A rate for each counted check; a baseline says it is one.
        let lesson03 = Catalogue.lesson(named: "03")!
        #expect(zip(lesson03.everyCheck, rates).allSatisfy { check, rate in
            lesson03.isBaseline(check.id) ? rate == "baseline" : rate.wholeMatch(of: /\d+\/\d+/) != nil
        }, "\(rates)")
    }
}
