import Foundation
import LabClass
import Testing

/// A name belongs to one student: the first copy of the lab to submit under it holds it, each
/// copy holds one name, and the teacher releases a name from the command line or the page.
struct ClassNamesTests {
    @Test func aNameIsHeldByOneCopyUntilTheTeacherReleasesIt() throws {
        let folder = try scratchDirectory()
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        let (ada, eve) = (ClassFixtures.key(), ClassFixtures.key())
        func submit(_ name: String, _ key: String) throws -> (status: Int, body: String) {
            try ClassHTTP.post(server.submissions, ClassFixtures.json(ClassFixtures.submission(name: name, key: key)))
        }
        #expect(try submit("Ada", ada).status == 200)
        // Another copy under Ada's name, and Ada's copy under a classmate's: both refused in one line.
        #expect(try submit("Ada", eve) == (403, "this name is taken by another student's copy of the lab; submit under another --name, "
                                              + "or ask the teacher to release it\n"))
        #expect(try submit("Grace", ada) == (403, "this copy of the lab submits as \"Ada\" in this class; to submit under another --name, "
                                               + "ask the teacher to release \"Ada\"\n"))
        #expect(try server.stored().grid.students == ["Ada"])

        // Released on the command line: the next copy holds it, and what Ada sent is kept.
        let released = try ChildProcess.run("lab", ["class", "release", "Ada", "--data", server.data.path])
        #expect(released.status == 0 && released.stdout == "released \"Ada\": the next copy of the lab to submit under it holds it\n",
                "\(released.stderr)")
        #expect(try submit("Ada", eve).status == 200)
        #expect(try submit("Ada", ada).status == 403, "the old copy no longer holds it")
        #expect(try server.stored().ids.count == 2)
        // The old copy, holding nothing now, may take a name of its own.
        #expect(try submit("Ada Lovelace", ada).status == 200)

        // Released from the page: a form post, then back to the page.
        let page = try ClassHTTP.get(server.teacherURL)
        #expect(page.body.contains("<form method=\"post\" action=\"\(server.teacherToken)/release\">"), "\(page.body.suffix(600))")
        let posted = try ClassHTTP.post(server.teacherURL + "/release", Data("name=Ada+Lovelace".utf8))
        #expect(posted.status == 303 || posted.status == 200, "\(posted)")
        #expect(try submit("Ada Lovelace", ClassFixtures.key()).status == 200)
        #expect(try ClassHTTP.post(server.teacherURL + "/release", Data("name=Nobody".utf8)).status == 404)
        #expect(try ClassHTTP.post("\(server.base)/teacher/0123456789abcdef0123456789abcdef/release", Data("name=Ada".utf8)).status == 403)

        let unknown = try ChildProcess.run("lab", ["class", "release", "Nobody", "--data", server.data.path])
        #expect(unknown.status == 65 && unknown.stderr == "lab class release: the class in \(server.data.path) has no student named \"Nobody\"\n")
    }
}
