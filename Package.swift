// swift-tools-version: 6.3
// 6.3: the toolchain CI builds and tests with; an older one is never compiled, so not promised.
import Foundation
import PackageDescription

/// Every lesson, once: its folder under Sources/ is `lesson-<name>`, its exercise's
/// `Sources/Exercises/<name>`. LabVocabulary's `LessonID` lists the same names (a test checks).
let lessons = [
    "00-small-file", "01-in-memory", "02-filehandle", "03-outputstream", "04-session-data-task",
    "05-download-task-resume", "06-runloop-thread", "07-multipart-upload", "08-async-await",
    "09-background-session", "10-conditional-get", "11-segmented",
]
let lessonExecutables = lessons.map { "lesson-\($0)" }
/// An exercise is a target once `lab exercise reset` has made its folder: a new lesson's folder
/// builds, and `lab` with it, before its exercise exists.
let exercises = lessons.filter {
    FileManager.default.fileExists(atPath: "\(Context.packageDirectory)/Sources/Exercises/\($0)/main.swift")
}
let exerciseExecutables = exercises.map { "exercise-\($0)" }

#if os(macOS)
// Apple's SDK has libxml2's headers (usr/include/libxml), its module map and libxml2.tbd: nothing
// to look up, and no Homebrew needed. (A Mac building for Linux would need the .pc file.)
let libxml2PkgConfig: String? = nil
#else
let libxml2PkgConfig: String? = "libxml-2.0"
#endif

let package = Package(
    name: "DownloadLab",
    // macOS 15 is the lowest the code allows: its shared state is guarded by the Synchronization
    // module's Mutex and Atomic, which Apple's systems have from macOS 15 on.
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "lab", targets: ["lab"]),
        .executable(name: "lab-measure", targets: ["lab-measure"]),
        .executable(name: "foundation-floor", targets: ["foundation-floor"]),
        .library(name: "LabKit", targets: ["LabKit"]),
        .library(name: "LabHarness", targets: ["LabHarness"]),
        .library(name: "LabServer", targets: ["LabServer"]),
        .library(name: "LabReport", targets: ["LabReport"]),
    ] + (lessonExecutables + exerciseExecutables).map { .executable(name: $0, targets: [$0]) },
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio", "2.101.2"..<"2.102.0"),
        // The class server's store: SQLite, so an acknowledged submission survives a crash.
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        // The `gzip` fault's compression: zlib through a ByteBuffer API, streamed a slice at a time.
        .package(url: "https://github.com/adam-fowler/compress-nio", exact: "1.5.0"),
    ],
    targets: [
        // The lab's names as types, declared once: lessons, variants, scenarios, sizes, fault scripts.
        .target(name: "LabVocabulary"),
        // The one platform seam: Linux.swift and Darwin.swift (docs/architecture.md).
        .target(name: "LabPlatform", dependencies: ["CLabPlatform"]),
        // C that Swift cannot reach directly: a Darwin call Swift 6 refuses with older SDKs, the current
        // queue's label, and the queues' work a thread's stack holds (see its header).
        .target(name: "CLabPlatform"),
        // The generated files: bytes by offset and their SHA-256, for the server and the upload lesson.
        .target(
            name: "LabFixtures",
            dependencies: ["LabVocabulary", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // libxml2 from the system (Debian: libxml2-dev; on a Mac, the SDK's); the HTML report renders through it.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: libxml2PkgConfig,
            providers: [.apt(["libxml2-dev"])]
        ),
        .target(
            name: "LabServer",
            dependencies: [
                "LabVocabulary", "LabFixtures", "LabPlatform",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ]
        ),
        // What a lesson's code uses: Apple's API under Apple's names where Foundation on Linux lacks
        // it, NSURLConnection's work-alike, the resume rules, and the run's handles (its URL, file,
        // progress bar and log). No SwiftNIO: the server a lesson starts comes from EmbeddedServer,
        // which only a lesson's main.swift imports.
        .target(name: "LabKit", dependencies: ["LabVocabulary", "LabFixtures", "LabPlatform"]),
        // What runs a lesson: its command line, the one wait, the attempts, the record and the exit status.
        .target(
            name: "LabHarness",
            dependencies: [
                "LabKit", "LabVocabulary", "LabFixtures", "LabPlatform",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Lesson 09's phone: the app's process, the transfer service's, and the background session
        // between them.
        .target(name: "LabPhone", dependencies: ["LabKit", "LabHarness", "LabVocabulary", "LabFixtures", "LabPlatform", "CCurl"]),
        // libcurl from the system (Debian: libcurl4-openssl-dev; on a Mac, the SDK's): the transfer
        // service's downloads, whose memory URLSession on Linux cannot hold flat (CurlGet.swift).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        .target(name: "EmbeddedServer", dependencies: ["LabKit", "LabHarness", "LabPhone", "LabServer", "LabVocabulary", "LabFixtures"]),
        // Each lesson's defects, the runs that expose them, hints, and the exercises' starting code.
        .target(name: "LabCatalogue", dependencies: ["LabVocabulary", "LabPlatform"]),
        // results.json and the HTML report drawn from it.
        .target(name: "LabReport", dependencies: ["LabVocabulary", "CLibXML2"]),
        // The class server (`lab class serve`): submissions in SQLite, the teacher's page over SwiftNIO.
        .target(
            name: "LabClass",
            dependencies: [
                "LabVocabulary", "LabCatalogue", "LabReport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "lab",
            dependencies: [
                "LabVocabulary", "LabFixtures", "LabServer", "LabKit", "LabHarness", "LabReport", "LabCatalogue", "LabPlatform", "LabClass",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `lab compare` runs these as child processes; listing them here makes
                // `swift run lab compare` build them first.
                "lab-measure", "foundation-floor",
            ] + lessonExecutables.map { .target(name: $0) }
        ),
        // Starts each process `lab compare` measures; in C, so it stays small (see main.c).
        .executableTarget(name: "lab-measure"),
        // Foundation's floor: a bare URLSession download that `lab compare` measures beside curl.
        .executableTarget(name: "foundation-floor"),
        // The tests' one temporary folder, removed when the test process ends.
        .target(name: "TestFolders", path: "Tests/TestFolders"),
        // Where a test that blocks waits: a thread of its own, not one of Swift Testing's two.
        .target(name: "TestThreads", path: "Tests/TestThreads"),
        // Servers that answer what the lab's never would, over real sockets, and the lab's own for one
        // test at a time (`withLabServer`).
        .target(name: "TestServers", dependencies: ["LabPlatform", "LabServer"], path: "Tests/TestServers"),
        .testTarget(
            name: "LabServerTests",
            dependencies: ["LabVocabulary", "LabFixtures", "LabServer", "LabPlatform", "TestFolders", "TestThreads", "TestServers",
                           .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "LabKitTests",
                    dependencies: ["LabVocabulary", "LabFixtures", "LabKit", "LabHarness", "LabPhone", "LabServer", "LabPlatform", "TestFolders", "TestThreads",
                                   "TestServers"]),
        .testTarget(name: "CLibXML2Tests", dependencies: ["CLibXML2"]),
        .testTarget(name: "LabReportTests", dependencies: ["LabVocabulary", "LabReport", "CLibXML2", "TestFolders"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TestFolders", "TestThreads", "TestServers", "LabVocabulary", "LabFixtures", "LabKit", "LabHarness", "LabPhone", "LabServer", "LabReport", "LabCatalogue", "LabPlatform",
                "LabClass",
                "lab", "lab-measure", "foundation-floor",
            ] + lessonExecutables.map { .target(name: $0) },
            // Run by the tests as they are: the browser's driver, the HTTP client, the exports' reader, JUnit's schema; HAR's schema and its checker.
            exclude: ["Support/Class/browser.py", "Support/Class/client.py", "Support/Class/formats.py", "Support/Class/junit.xsd",
                      "Support/HAR/har-1.2.schema.json", "Support/HAR/har_check.py"]
        ),
    ]
        // LabPlatform: a demonstration of Foundation on Linux asks whether it runs there.
        + lessonExecutables.map { .executableTarget(name: $0, dependencies: ["LabKit", "LabHarness", "LabVocabulary", "LabPlatform", "EmbeddedServer"]) }
        // The students' copies of the article variants (`lab exercise reset` writes them). `lab`
        // does not depend on them: it builds one when asked to check it, so code that does not
        // compile yet never stops the lab itself from building.
        + exercises.map { .executableTarget(name: "exercise-\($0)", dependencies: ["LabKit", "LabHarness", "LabVocabulary", "EmbeddedServer"],
                                          path: "Sources/Exercises/\($0)") },
    swiftLanguageModes: [.v6]
)
