import Foundation
import LabVocabulary
import Testing

/// `lab pages` puts strings from a results file (a machine's name, a failure's cause) into the
/// lesson pages: rendered by a Markdown renderer (python-markdown) and opened in headless
/// Chromium, they are text, never markup, and no control character reaches the page.
struct PageTextTests {
    static let hostile = "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
        + "\u{202E}*bold* [link](http://x) `code` |cell|\n# heading\u{0007}"

    private static var canRender: Bool {
        runningInCI || (executable(named: "chromium-headless-shell") != nil
            && (try? ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import markdown"]).status) == 0)
    }

    @Test(.enabled(if: canRender, "python3's markdown or chromium-headless-shell is missing (pip install markdown)"))
    func aResultsFilesStringsAreTextOnEveryPage() throws {
        let quick = try CompareTests.quickRun.get()
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The quick run's results, with a hostile machine name and a hostile cause for every run.
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: quick.folder.appendingPathComponent("results.json"))) as? [String: Any])
        var environment = try #require(object["environment"] as? [String: Any])
        environment["operatingSystem"] = Self.hostile
        object["environment"] = environment
        object["runs"] = try #require(object["runs"] as? [[String: Any]]).map { run in
            var run = run
            if run["status"] as? String != "pass" { run["cause"] = Self.hostile }
            return run
        }
        let results = folder.appendingPathComponent("results.json")
        try JSONSerialization.data(withJSONObject: object).write(to: results)
        let pages = folder.appendingPathComponent("Lessons")
        try FileManager.default.createDirectory(at: pages, withIntermediateDirectories: true)
        for lesson in LessonID.allCases {
            try FileManager.default.copyItem(at: ExerciseTests.packageRoot.appendingPathComponent("Lessons/\(lesson.rawValue).md"),
                                             to: pages.appendingPathComponent("\(lesson.rawValue).md"))
        }
        let written = try ChildProcess.run("lab", ["pages", results.path, "--lessons", pages.path])
        try #require(written.status == 0, "\(written.stderr)")

        // Lesson 03's article fails two scenarios: its page has the machine's name and two causes.
        let page = pages.appendingPathComponent("\(LessonID.outputStream.rawValue).md")
        let markdown = try String(contentsOf: page, encoding: .utf8)
        #expect(!markdown.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{0007}" })
        let html = folder.appendingPathComponent("page.html")
        let rendered = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-m", "markdown", "-x", "tables", page.path])
        try #require(rendered.status == 0, "\(rendered.stderr)")
        try Data(("<!doctype html><meta charset=utf-8><body>" + rendered.stdout).utf8).write(to: html)
        let answers = try Browser.run(html.absoluteString, steps: [
            ["eval": "document.title"],
            ["eval": "document.querySelectorAll('script, img[src=x], a[href=\"http://x\"]').length"
                + " + [...document.querySelectorAll('em, code, h1')].filter(e => ['bold', 'code', 'heading'].includes(e.textContent.trim())).length"],
            ["eval": "[...document.body.querySelectorAll('p, li')].filter(e => e.textContent.includes(\"<img src=x onerror=\")).length"],
            ["eval": "document.body.textContent.includes('*bold* [link](http://x) `code` |cell|# heading')"],
        ])
        #expect(answers[0] as? String != "pwned")
        #expect(answers[1] as? Int == 0, "markup from the results file became elements")
        // The machine's name in the first paragraph, and a cause for each failed run of lesson 03.
        let failures = quick.results.loopbackRuns.filter { $0.lesson == LessonID.outputStream.rawValue && $0.status != .pass }.count
        #expect(failures > 0 && answers[2] as? Int == 1 + failures, "\(answers[2])")
        #expect(answers[3] as? Bool == true)
    }
}
