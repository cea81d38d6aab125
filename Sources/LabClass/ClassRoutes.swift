import Foundation
import LabCatalogue
import LabReport
import LabVocabulary
import NIOCore
import NIOHTTP1
import Synchronization

/// What the class server answers. Students post to `/class/CODE/submissions`; the teacher reads
/// `/teacher/TOKEN` (the page), `/teacher/TOKEN/count` (what the page's script polls) and
/// `/teacher/TOKEN/live.js`. Every refusal is one line of text.
final class ClassRoutes: Sendable {
    /// The largest body a submission may have: a comparison with every run's memory timeline
    /// is about 300 KiB.
    static let largestBody = ClassSubmission.largestFile

    let store: ClassStore
    let credentials: ClassCredentials
    /// The page as last drawn, by the submission count it shows: 60 browsers polling a class
    /// draw it once per change, not once each.
    private let drawn = Mutex<(submissions: Int, page: String)?>(nil)

    init(store: ClassStore, credentials: ClassCredentials) {
        self.store = store
        self.credentials = credentials
    }

    func respond(to head: HTTPRequestHead, body: ByteBuffer) async -> ClassResponse {
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch (head.method, parts.first, parts.count) {
        case (_, "class", 2...3):
            guard ClassCredentials.same(parts[1], credentials.classCode) else { return .refused("wrong class code") }
            if parts.count == 2 || parts[2].isEmpty {
                return head.method == .GET ? .text(.ok, "Download Lab class \(credentials.classCode): submit with "
                    + "`lab exercise check --all --submit URL --name NAME`, where URL is this page's address.")
                    : .text(.methodNotAllowed, "only GET here; submissions go to \(path)/submissions")
            }
            guard parts[2] == "submissions" else { return .notFound }
            guard head.method == .POST else { return .text(.methodNotAllowed, "submit with POST") }
            return await submit(Data(body.readableBytesView))
        case (_, "teacher", 2...3):
            guard ClassCredentials.same(parts[1], credentials.teacherToken) else { return .refused("wrong teacher token") }
            if parts.count == 3, parts[2] == "release" {
                guard head.method == .POST else { return .text(.methodNotAllowed, "release a name with POST, from the page") }
                return await release(Data(body.readableBytesView))
            }
            guard head.method == .GET else { return .text(.methodNotAllowed, "only GET here") }
            return await teacher(parts.count == 3 ? parts[2] : "")
        case (.GET, "", 1):
            return .text(.ok, "Download Lab class server. Students submit with the address the teacher gives; "
                         + "the teacher's page is at the address `lab class serve` printed.")
        default:
            return .notFound
        }
    }

    private func submit(_ body: Data) async -> ClassResponse {
        let submission: ClassSubmission
        do {
            submission = try SubmissionCheck.submission(from: body)
        } catch {
            return .text(.badRequest, error.line)
        }
        do {
            let stored = try await store.store(submission, body: body)
            let what = submission.comparison.map { "a comparison of \($0.runs.count) runs" }
                ?? "\(submission.checks.count) checks, \(submission.checks.filter(\.passed).count) holding, \(Self.credited(submission.checks)) of them credited"
            return .text(.ok, (stored == .stored ? "stored: " : "already stored: ") + what)
        } catch let refusal as ClassRefusal {
            return .refused(refusal.description)
        } catch {
            return .text(.serviceUnavailable, "the class server could not store it: \(error)")
        }
    }

    /// The page's release button: `name=<the name>`, form-encoded. Back to the page after.
    private func release(_ body: Data) async -> ClassResponse {
        guard let name = Self.formField("name", in: body) else { return .text(.badRequest, "say which name to release: name=NAME") }
        do {
            guard try await store.releaseNow(name) else { return .text(.notFound, "the class has no student named \"\(name)\"") }
        } catch {
            return .text(.serviceUnavailable, "the class server could not release it: \(error)")
        }
        drawn.withLock { $0 = nil }
        var back = ClassResponse.text(.seeOther, "released \"\(name)\": the next copy of the lab to submit under it holds it")
        back.location = "../\(credentials.teacherToken)"
        return back
    }

    /// How many of the checks earn credit, by the catalogue's baselines rather than the record's.
    static func credited(_ checks: [CheckRecord]) -> Int {
        checks.filter { record in
            record.passed && Catalogue.lessons.first { $0.id.rawValue == record.exercise }.map { !$0.isBaseline(record.check) } == true
        }.count
    }

    /// One field of an `application/x-www-form-urlencoded` body, decoded.
    static func formField(_ field: String, in body: Data) -> String? {
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == field else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 }
        }
        return nil
    }

    private func teacher(_ what: String) async -> ClassResponse {
        switch what {
        case "":
            do {
                return ClassResponse(status: .ok, contentType: "text/html; charset=utf-8", body: try await page())
            } catch {
                return .text(.serviceUnavailable, "cannot read the class: \(error)")
            }
        case "count":
            guard let count = try? await store.submissionCount() else { return .text(.serviceUnavailable, "cannot read the class") }
            return .text(.ok, String(count))
        case "live.js":
            return ClassResponse(status: .ok, contentType: "text/javascript; charset=utf-8", body: ClassPage.liveScript)
        default:
            return .notFound
        }
    }
}

extension ClassRoutes {
    private func page() async throws -> String {
        let submissions = try await store.submissionCount()
        if let drawn = drawn.withLock({ $0 }), drawn.submissions == submissions { return drawn.page }
        let grid = try await store.grid()
        let page = ClassPage(grid: grid, scriptPath: "\(credentials.teacherToken)/live.js",
                             releasePath: "\(credentials.teacherToken)/release").render()
        drawn.withLock { $0 = (grid.submissions, page) }
        return page
    }
}

struct ClassResponse: Sendable {
    let status: HTTPResponseStatus
    let contentType: String
    let body: String
    /// Where a 303 sends the browser.
    var location: String? = nil

    static func text(_ status: HTTPResponseStatus, _ line: String) -> ClassResponse {
        ClassResponse(status: status, contentType: "text/plain; charset=utf-8", body: line + "\n")
    }

    static func refused(_ line: String) -> ClassResponse { .text(.forbidden, line) }
    static let notFound = text(.notFound, "no such page")
    static let tooLarge = text(.payloadTooLarge, "the body is larger than 1 MiB")
    static let busy = text(.serviceUnavailable, "the class server is busy; submit again in a moment")
}
