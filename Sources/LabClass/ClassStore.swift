import Foundation
import GRDB
import LabCatalogue
import LabReport
import LabVocabulary

/// A class's submissions in one SQLite file (`class.sqlite` in the class's data folder), kept
/// through GRDB. Every submission is written in one transaction with `synchronous = FULL`, so
/// once the server has answered 200 the submission survives a crash of the server or the machine.
///
/// It keeps every submission (the history); the grid shows each student's latest per exercise.
public final class ClassStore: Sendable {
    /// `class.sqlite` in the data folder.
    public static let fileName = "class.sqlite"

    private let database: DatabasePool

    /// Opens the class in `folder`, creating the folder (readable by its owner only) and the
    /// database the first time; the class code and teacher token are made then and kept.
    public init(folder: URL, limits: Limits = .standard) throws(ClassStoreError) {
        self.limits = limits
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotCreate("cannot create the data folder \(folder.path): \(systemReason(of: error))")
        }
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            // FULL: a commit is on disk before the server answers; NORMAL could lose the last
            // ones to a power cut.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        configuration.busyMode = .timeout(10)
        do {
            database = try DatabasePool(path: folder.appendingPathComponent(Self.fileName).path, configuration: configuration)
            try Self.migrator.migrate(database)
            // It holds the teacher's token: its owner's alone, whatever folder it is in. SQLite's
            // companion files (-wal, -shm) follow the database's mode.
            for name in [Self.fileName, Self.fileName + "-wal", Self.fileName + "-shm"] {
                chmod(folder.appendingPathComponent(name).path, 0o600)
            }
        } catch {
            throw .cannotCreate("cannot open \(folder.appendingPathComponent(Self.fileName).path): \(Self.reason(error))")
        }
    }

    private static func reason(_ error: any Error) -> String {
        (error as? DatabaseError).map { $0.message ?? "\($0.resultCode)" } ?? systemReason(of: error)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("class/1") { db in
            try db.execute(sql: """
                CREATE TABLE setting (name TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE student (name TEXT PRIMARY KEY, keyDigest TEXT NOT NULL, firstSeen TEXT NOT NULL);
                CREATE TABLE submission (
                    number INTEGER PRIMARY KEY AUTOINCREMENT,
                    id TEXT NOT NULL UNIQUE,
                    student TEXT NOT NULL REFERENCES student(name),
                    kind TEXT NOT NULL,
                    createdAt TEXT NOT NULL,
                    receivedAt TEXT NOT NULL,
                    body BLOB NOT NULL);
                CREATE TABLE checkResult (
                    submission INTEGER NOT NULL REFERENCES submission(number),
                    student TEXT NOT NULL,
                    exercise TEXT NOT NULL,
                    "check" TEXT NOT NULL,
                    status TEXT NOT NULL,
                    passed INTEGER NOT NULL,
                    attempted INTEGER NOT NULL,
                    detail TEXT NOT NULL,
                    checkedAt TEXT NOT NULL);
                CREATE INDEX checkResultByStudent ON checkResult(student, exercise, submission);
                """)
            try db.execute(sql: "INSERT INTO setting VALUES ('classCode', ?), ('teacherToken', ?)",
                           arguments: [ClassCredentials.newClassCode(), ClassCredentials.newTeacherToken()])
        }
        // A failing check's run, for the teacher's picture of where a student is stuck.
        migrator.registerMigration("class/2") { db in
            try db.execute(sql: "ALTER TABLE checkResult ADD COLUMN exchanges BLOB")
        }
        // How long each check took, for the JUnit export's times; NULL for results kept before.
        migrator.registerMigration("class/3") { db in
            try db.execute(sql: "ALTER TABLE checkResult ADD COLUMN seconds REAL")
        }
        return migrator
    }

    /// The class code students type and the teacher's token, made when the class was.
    public func credentials() throws -> ClassCredentials {
        try database.read { db in
            let settings = try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT name, value FROM setting").map {
                (String.fromDatabaseValue($0[0])!, String.fromDatabaseValue($0[1])!)
            })
            return ClassCredentials(classCode: settings["classCode"]!, teacherToken: settings["teacherToken"]!)
        }
    }

    public enum Stored: Sendable, Equatable {
        case stored
        /// The same submission id was stored before: a replay.
        case alreadyStored
    }

    /// How large a class may grow: a class code in the wrong hands cannot grow the server's
    /// store, and the page, for ever.
    public struct Limits: Sendable {
        /// The most names a class takes.
        public var students: Int
        /// The most one student's submissions keep, all together.
        public var bytesPerStudent: Int

        public init(students: Int, bytesPerStudent: Int) {
            self.students = students
            self.bytesPerStudent = bytesPerStudent
        }

        /// A class of 300, each student's term of checks fitting many times over (a `check --all`
        /// is about 40 KiB, a comparison about 300 KiB).
        public static let standard = Limits(students: 300, bytesPerStudent: 16 << 20)
    }
    public let limits: Limits

    /// Stores a submission that `ClassSubmissionCheck` accepted, all or nothing. The first
    /// submission under a name claims it for the student key it carries.
    public func store(_ submission: ClassSubmission, body: Data, receivedAt: Date = Date()) async throws -> Stored {
        let keyDigest = ClassCredentials.digest(submission.studentKey)
        return try await database.write { db in
            if let owner = try Row.fetchOne(db, sql: "SELECT student FROM submission WHERE id = ?", arguments: [submission.id]) {
                guard String.fromDatabaseValue(owner[0]) == submission.name else { throw ClassRefusal.idTaken }
                return .alreadyStored
            }
            let held = try String.fetchAll(db, sql: "SELECT name FROM student WHERE keyDigest = ?", arguments: [keyDigest])
            if let other = held.first(where: { $0 != submission.name }) { throw ClassRefusal.copyHoldsAnotherName(other) }
            if let claimed = try String.fetchOne(db, sql: "SELECT keyDigest FROM student WHERE name = ?", arguments: [submission.name]) {
                if claimed == Self.released {
                    try db.execute(sql: "UPDATE student SET keyDigest = ? WHERE name = ?", arguments: [keyDigest, submission.name])
                } else if !ClassCredentials.same(claimed, keyDigest) {
                    throw ClassRefusal.nameTaken(submission.name)
                }
                let kept = try Int.fetchOne(db, sql: "SELECT SUM(LENGTH(body)) FROM submission WHERE student = ?",
                                            arguments: [submission.name]) ?? 0
                guard kept + body.count <= limits.bytesPerStudent else { throw ClassRefusal.studentFull(bytes: limits.bytesPerStudent) }
            } else {
                guard try (Int.fetchOne(db, sql: "SELECT COUNT(*) FROM student") ?? 0) < limits.students else {
                    throw ClassRefusal.classFull(students: limits.students)
                }
                try db.execute(sql: "INSERT INTO student VALUES (?, ?, ?)",
                               arguments: [submission.name, keyDigest, ISO8601DateFormatter().string(from: receivedAt)])
            }
            try db.execute(sql: "INSERT INTO submission (id, student, kind, createdAt, receivedAt, body) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [submission.id, submission.name, submission.comparison == nil ? "exercise" : "compare",
                                       submission.createdAt, ISO8601DateFormatter().string(from: receivedAt), body])
            let number = db.lastInsertedRowID
            let encoder = JSONEncoder()
            for record in submission.checks {
                try db.execute(sql: "INSERT INTO checkResult VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               arguments: [number, submission.name, record.exercise, record.check, record.status.rawValue,
                                           record.passed, record.attempted, record.detail, record.timestamp,
                                           try record.exchanges.map(encoder.encode), record.seconds])
            }
            return .stored
        }
    }

    /// What a released name's key digest is: no copy holds it, and the next to submit under it will.
    static let released = ""

    /// Lets the next copy of the lab that submits under `name` hold it, keeping what was
    /// submitted under it: a student whose copy was lost, or who typed a name by mistake, asks
    /// the teacher. False when the class has no such name.
    public func release(_ name: String) throws -> Bool {
        try database.write { db in try Self.release(name, in: db) }
    }

    private static func release(_ name: String, in db: Database) throws -> Bool {
        try db.execute(sql: "UPDATE student SET keyDigest = ? WHERE name = ?", arguments: [released, name])
        return db.changesCount > 0
    }

    /// The same, from the server's routes.
    public func releaseNow(_ name: String) async throws -> Bool {
        try await database.write { db in try Self.release(name, in: db) }
    }

    /// How many submissions the class has: the page's script reloads when it changes.
    public func submissionCount() async throws -> Int {
        try await database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM submission") ?? 0 }
    }

    /// The ids of every stored submission.
    public func submissionIDs() throws -> Set<String> {
        try database.read { db in Set(try String.fetchAll(db, sql: "SELECT id FROM submission")) }
    }

    /// Each student's latest results, and their latest comparison: what the page and the exports show.
    public func grid() async throws -> ClassGrid {
        try await database.read(Self.grid)
    }

    /// The same, for a command that is not async (`lab class export`).
    public func gridNow() throws -> ClassGrid {
        try database.read(Self.grid)
    }

    /// For each student and exercise, every row of the latest submission that covers that
    /// exercise: a newer run replaces an older one whole, so a build failure greys out its
    /// exercise instead of leaving older results standing beside it.
    private static func grid(_ db: Database) throws -> ClassGrid {
        // "Student 2" before "Student 10", as a person sorts them.
        let students = try String.fetchAll(db, sql: "SELECT name FROM student")
            .sorted { $0.localizedStandardCompare($1) == .orderedAscending }
        var cells: [ClassGrid.Cell] = []
        let rows = try Row.fetchAll(db, sql: """
            WITH covering AS (
                SELECT DISTINCT c.student, c.exercise, c.submission, s.createdAt, s.receivedAt
                FROM checkResult c JOIN submission s ON s.number = c.submission),
            latest AS (
                SELECT *, ROW_NUMBER() OVER (PARTITION BY student, exercise ORDER BY createdAt DESC, submission DESC) AS rank
                FROM covering)
            SELECT c.student, c.exercise, c."check", c.status, c.passed, c.attempted, c.detail, c.exchanges, c.seconds, l.receivedAt
            FROM checkResult c JOIN latest l ON l.rank = 1 AND l.submission = c.submission AND l.exercise = c.exercise
            """)
        let decoder = JSONDecoder()
        for row in rows {
            guard let status = CheckStatus(rawValue: row["status"]) else { continue }
            let run = (row["exchanges"] as Data?).flatMap { try? decoder.decode(ComparisonResults.ExchangeTimeline.self, from: $0) }
            cells.append(ClassGrid.Cell(student: row["student"], exercise: row["exercise"], check: row["check"], status: status,
                                        passed: row["passed"], attempted: row["attempted"], detail: row["detail"],
                                        submittedAt: row["receivedAt"], seconds: row["seconds"], run: run))
        }
        var comparisons: [ClassGrid.Comparison] = []
        let latestComparisons = try Row.fetchAll(db, sql: """
            SELECT student, body FROM (
                SELECT student, body, ROW_NUMBER() OVER (PARTITION BY student ORDER BY createdAt DESC, number DESC) AS rank
                FROM submission WHERE kind = 'compare')
            WHERE rank = 1 ORDER BY student
            """)
        for row in latestComparisons {
            let body: Data = row["body"]
            if let results = try? decoder.decode(ClassSubmission.self, from: body).comparison {
                comparisons.append(.init(student: row["student"], results: results))
            }
        }
        let columns = Catalogue.lessons.flatMap { lesson in
            lesson.everyCheck.map { ClassGrid.Column(exercise: lesson.id.rawValue, number: lesson.id.number, check: $0.id,
                                                     baseline: lesson.isBaseline($0.id)) }
        }
        let submissions = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM submission") ?? 0
        return ClassGrid(students: students, columns: columns, cells: cells, comparisons: comparisons, submissions: submissions)
    }
}

/// Why a class's data folder cannot be used: `lab class serve` exits 73 with the line.
public enum ClassStoreError: Error, CustomStringConvertible {
    case cannotCreate(String)

    public var description: String {
        switch self { case .cannotCreate(let line): line }
    }
}

/// A submission the store refuses, though it is well formed.
public enum ClassRefusal: Error, Equatable, CustomStringConvertible {
    /// Another copy of the lab submitted under this name first.
    case nameTaken(String)
    /// The submitting copy already holds another name in the class: one copy, one student.
    case copyHoldsAnotherName(String)
    /// The id was stored for another student: not a replay.
    case idTaken
    /// The class has as many names as its limits allow.
    case classFull(students: Int)
    /// The student's submissions hold as many bytes as the limits allow.
    case studentFull(bytes: Int)

    public var description: String {
        switch self {
        case .nameTaken: "this name is taken by another student's copy of the lab; submit under another --name, or ask the teacher to release it"
        case .copyHoldsAnotherName(let name): "this copy of the lab submits as \"\(name)\" in this class; to submit under another --name, ask the teacher to release \"\(name)\""
        case .idTaken: "this submission id is taken; submit again"
        case .classFull(let students): "the class has \(students) students already, the most it takes; ask the teacher"
        case .studentFull(let bytes): "this student's submissions hold \(bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes) bytes") already, the most a class keeps "
            + "for one; ask the teacher"
        }
    }
}
